import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';

export const REDIS_URL = 'redis://127.0.0.1:6379';
/** Nothing listens on port 1: connections are refused at once. */
export const UNREACHABLE_REDIS_URL = 'redis://127.0.0.1:1';

/** Fresh key prefixes for one test file, and the keys under them, removed after each test. */
export class TestKeyspace {
  readonly admin = new Redis(REDIS_URL);
  private readonly prefixes: string[] = [];

  prefix(kind: string): string {
    const prefix = `test-coordination-${kind}-${randomUUID().slice(0, 8)}`;
    this.prefixes.push(prefix);
    return prefix;
  }

  async keysOf(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await this.admin.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    return keys;
  }

  async cleanUp(): Promise<void> {
    for (const prefix of this.prefixes.splice(0)) {
      const keys = await this.keysOf(prefix);
      if (keys.length > 0) await this.admin.del(...keys);
    }
  }

  close(): void {
    this.admin.disconnect();
  }
}

/**
 * A TCP server that accepts connections and never answers, like a Redis paused with SIGSTOP or
 * `CLIENT PAUSE`: commands are sent and no reply ever comes.
 */
export async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `redis://127.0.0.1:${address.port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The package folder, where `node --import tsx` finds tsx. */
const packageDir = fileURLToPath(new URL('../', import.meta.url));

/** Starts one of the `test/` scripts as its own Node process. */
export function startScript(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', '--conditions=@chat/source', `test/${script}`, ...args], {
    cwd: packageDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves with the first stdout line of `child` that parses as JSON; rejects if it exits first. */
export function firstJsonLine<T>(child: ChildProcess, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no report within ${timeoutMs} ms; stderr: ${err}`)), timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const newline = out.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.slice(0, newline)) as T);
      } catch (parseError) {
        reject(parseError);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`script exited with ${code} before reporting; stderr: ${err}`));
    });
  });
}
