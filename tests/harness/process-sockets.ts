import { readdir, readFile, readlink } from 'node:fs/promises';

/**
 * Connections a process holds on its listening port: the socket descriptors in `/proc/<pid>/fd`
 * whose TCP entry (`/proc/net/tcp`, `tcp6`) has that local port and is not the listener itself.
 * Connections the process opened to others (its pools, core) have other local ports and do not count.
 */
export async function serverConnections(pid: number, port: number): Promise<number> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(file, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const localPort = parseInt(fields[1]!.split(':')[1]!, 16);
      // 0A is LISTEN.
      if (localPort === port && fields[3] !== '0A') inodes.add(fields[9]!);
    }
  }
  let held = 0;
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode && inodes.has(inode)) held++;
  }
  return held;
}
