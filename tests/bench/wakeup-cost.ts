/**
 * What one message between two processes costs on this machine, at the pace an append path sends
 * them: a client process sends a 300-byte message over loopback TCP to an echo process, which
 * answers 300 bytes; CPU per round trip of each side (process.cpuUsage, user + system) at 500 and
 * 2,000 round trips per second, paced, and flat out. At a paced rate each side sleeps in epoll between
 * messages, so every message pays for waking its receiver; flat out the messages queue and one wake-up
 * serves many. Neither side does any work beyond reading and writing, so the paced figures are a
 * floor for every hop of an append (request, core call, PostgreSQL statement, Redis publish and read):
 * the CPU per append of a service that crosses n processes is at least about n such round trips.
 *
 *   pnpm --filter @chat/tests exec tsx bench/wakeup-cost.ts [seconds per paced rate]
 */
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const MESSAGE_BYTES = 300;
const message = Buffer.alloc(MESSAGE_BYTES, 0x78);

interface CpuReply {
  user: number;
  system: number;
}

/** The echo side: answers every whole message it reads with one message. */
function runEcho(): void {
  const server = net.createServer((socket) => {
    socket.setNoDelay(true);
    let pending = 0;
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.length;
      while (pending >= MESSAGE_BYTES) {
        pending -= MESSAGE_BYTES;
        socket.write(message);
      }
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as net.AddressInfo).port }));
  process.on('message', () => {
    const { user, system } = process.cpuUsage();
    process.send!({ user, system } satisfies CpuReply);
  });
}

async function echoCpu(echo: ChildProcess): Promise<number> {
  echo.send('cpu');
  const [reply] = (await once(echo, 'message')) as [CpuReply];
  return reply.user + reply.system;
}

/** Sends `total` messages at `perSecond` (0: all at once) and resolves when every answer is in. */
async function exchange(socket: net.Socket, total: number, perSecond: number): Promise<void> {
  let answered = 0;
  const done = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      answered += chunk.length;
      if (answered >= total * MESSAGE_BYTES) {
        socket.off('data', onData);
        resolve();
      }
    };
    socket.on('data', onData);
  });
  if (perSecond === 0) {
    for (let i = 0; i < total; i++) socket.write(message);
  } else {
    const start = performance.now();
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) * perSecond) / 1000) + 1);
      for (; sent < due; sent++) socket.write(message);
      await new Promise((r) => setTimeout(r, Math.max(0, 1000 / perSecond - 1)));
    }
  }
  await done;
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 6);
  const echo = fork(fileURLToPath(import.meta.url), ['--echo']);
  const [{ port }] = (await once(echo, 'message')) as [{ port: number }];
  const socket = net.connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await once(socket, 'connect');
  await exchange(socket, 2_000, 0);

  console.log(`one ${MESSAGE_BYTES}-byte message each way over loopback TCP, CPU per round trip (user + system):`);
  for (const perSecond of [500, 2_000, 0]) {
    const total = perSecond === 0 ? 50_000 : perSecond * seconds;
    const echoBefore = await echoCpu(echo);
    const before = process.cpuUsage();
    const t0 = performance.now();
    await exchange(socket, total, perSecond);
    const wallMs = performance.now() - t0;
    const own = process.cpuUsage(before);
    const echoUs = (await echoCpu(echo)) - echoBefore;
    const pace = perSecond === 0 ? 'flat out' : `${perSecond.toLocaleString('en-US')}/s paced`;
    console.log(
      `  ${pace.padEnd(14)} ${total.toLocaleString('en-US').padStart(7)} round trips in ${(wallMs / 1000).toFixed(2)} s: ` +
        `sender ${((own.user + own.system) / total).toFixed(1)} µs, echo ${(echoUs / total).toFixed(1)} µs`,
    );
  }
  socket.destroy();
  echo.kill();
}

if (process.argv.includes('--echo')) runEcho();
else await main();
