import { readdir, readFile, readlink } from 'node:fs/promises';

/** A TCP socket of the machine, from `/proc/net/tcp` and `tcp6`. */
interface TcpSocket {
  localPort: number;
  remotePort: number;
  /** The kernel's state code: `01` ESTABLISHED, `0A` LISTEN, … */
  state: string;
}

const portOf = (address: string) => Number.parseInt(address.slice(address.lastIndexOf(':') + 1), 16);

/** Every TCP socket of the machine's network namespace, by inode. */
async function tcpSockets(): Promise<Map<string, TcpSocket>> {
  const sockets = new Map<string, TcpSocket>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      sockets.set(fields[9]!, { localPort: portOf(fields[1]!), remotePort: portOf(fields[2]!), state: fields[3]! });
    }
  }
  return sockets;
}

/** The sockets among process `pid`'s file descriptors that `matches` accepts. */
async function countSockets(pid: number, matches: (socket: TcpSocket) => boolean): Promise<number> {
  const sockets = await tcpSockets();
  let held = 0;
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    const socket = inode === undefined ? undefined : sockets.get(inode);
    if (socket && matches(socket)) held++;
  }
  return held;
}

/**
 * Connections a process holds on its listening port: the socket descriptors in `/proc/<pid>/fd`
 * whose TCP entry has that local port and is not the listener itself. Connections the process
 * opened to others (its pools, core) have other local ports and do not count.
 */
export function serverConnections(pid: number, port: number): Promise<number> {
  return countSockets(pid, (s) => s.localPort === port && s.state !== '0A');
}

/**
 * Established connections process `pid` opened to `port` (a client's to a service): nothing in the
 * process need cooperate.
 */
export function clientConnections(pid: number, port: number): Promise<number> {
  return countSockets(pid, (s) => s.remotePort === port && s.state === '01');
}
