import { connect, type Socket } from 'node:net';

/** What one misbehaving connection does. */
export type Misbehaviour =
  /** Sends a head without its blank line, waits for the 408, then resets. */
  | 'late-head-then-reset'
  /** Sends a stream GET without a token, waits for the 401, then resets. */
  | 'reset-after-refusal'
  /** Opens a stream, half-closes at once and keeps reading until the server closes. */
  | 'half-close'
  /** Sends a stream GET and is gone (FIN and close) in the same turn. */
  | 'leave-mid-open'
  /** Opens a stream and, once its head is in, resets. */
  | 'reset-open-stream'
  /** A stream GET followed by garbage in the same write, or garbage alone. */
  | 'pipeline-garbage'
  /** Sends a stream GET without a token and keeps its side open forever after the 401. */
  | 'never-close';

export const MISBEHAVIOURS: readonly Misbehaviour[] = [
  'late-head-then-reset',
  'reset-after-refusal',
  'half-close',
  'leave-mid-open',
  'reset-open-stream',
  'pipeline-garbage',
  'never-close',
];

export interface MisbehavingTarget {
  host: string;
  port: number;
  /** A stream path the token may read. */
  path: string;
  token: string;
  /** The server's head deadline: a late head is answered by then. */
  headersTimeoutMs: number;
}

/** What the clients saw, by status line (or `closed` without an answer). */
export type Outcomes = Record<string, number>;

const GARBAGE = ['\x00\x01\x02\xff\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n\x16\x03\x01', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', '\r\n\r\n\r\n', 'GET /\n\n'];

/**
 * Runs `total` connections against `target`, `concurrency` at a time, each doing one misbehaviour in
 * turn. Every connection ends (the server closes it, or the client does once it has seen what it
 * waited for); the sockets of `never-close` are destroyed only at the end of the run, after the
 * server side has had to close them.
 */
export async function runMisbehavingClients(target: MisbehavingTarget, total: number, concurrency: number): Promise<{ outcomes: Outcomes; held: Socket[] }> {
  const outcomes: Outcomes = {};
  const held: Socket[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const n = next++;
      const behaviour = MISBEHAVIOURS[n % MISBEHAVIOURS.length]!;
      const outcome = await misbehave(target, behaviour, n, held);
      const key = `${behaviour}: ${outcome}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { outcomes, held };
}

function misbehave(target: MisbehavingTarget, behaviour: Misbehaviour, n: number, held: Socket[]): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port, allowHalfOpen: behaviour === 'half-close' || behaviour === 'never-close' });
    let received = '';
    let settled = false;
    const status = () => /^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? (received.length > 0 ? 'other' : 'none');
    const settle = (outcome: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(outcome);
    };
    // Nothing here waits longer than the head deadline and a margin; a server that never answers shows as `stuck`.
    const deadline = setTimeout(() => {
      settle(`stuck (${status()})`);
      socket.destroy();
    }, target.headersTimeoutMs + 10_000);
    socket.on('error', () => undefined);
    socket.on('close', () => settle(status()));
    const get = (token: boolean) =>
      `GET ${target.path} HTTP/1.1\r\nHost: soak\r\nAccept: text/event-stream\r\n${token ? `Authorization: Bearer ${target.token}\r\n` : ''}\r\n`;
    /** Collects what arrives and calls `then` once a whole response head is in. */
    const onHead = (then: () => void) => {
      let seen = false;
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        if (seen || !received.includes('\r\n\r\n')) return;
        seen = true;
        then();
      });
    };
    socket.once('connect', () => {
      switch (behaviour) {
        case 'late-head-then-reset':
          socket.write(`GET ${target.path} HTTP/1.1\r\nHost: soak\r\n`);
          onHead(() => {
            settle(status());
            socket.resetAndDestroy();
          });
          break;
        case 'reset-after-refusal':
          socket.write(get(false));
          onHead(() => {
            settle(status());
            socket.resetAndDestroy();
          });
          break;
        case 'half-close':
          onHead(() => undefined);
          socket.end(get(true));
          break;
        case 'leave-mid-open':
          socket.end(get(true));
          socket.destroy();
          settle('left');
          break;
        case 'reset-open-stream':
          socket.write(get(true));
          onHead(() => {
            settle(status());
            socket.resetAndDestroy();
          });
          break;
        case 'pipeline-garbage': {
          const garbage = GARBAGE[n % GARBAGE.length]!;
          onHead(() => undefined);
          socket.write(n % 2 === 0 ? get(true) + garbage : garbage);
          // A stream that opened despite what follows its head stays open; the client leaves it.
          setTimeout(() => socket.destroy(), 200);
          break;
        }
        case 'never-close':
          socket.write(get(false));
          onHead(() => undefined);
          socket.once('end', () => {
            held.push(socket);
            settle(status());
          });
          break;
      }
    });
  });
}
