/**
 * One contender of the data folder lock race (data-dir-lock.test.ts), as a process of its own:
 * prints `ready`, waits for `go` on stdin, then tries to take the folder named by argv[2]. The
 * winner prints `owner` and keeps the folder until stdin closes; a loser prints `refused <message>`
 * and exits with 3.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { DataDirInUseError, lockDataDir } from '../src/data-dir-lock.ts';

const lines = createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => lines.on('line', (line) => line === 'go' && resolve()));
const closed = once(lines, 'close');
process.stdout.write('ready\n');
await go;
try {
  const lock = await lockDataDir(process.argv[2]!);
  process.stdout.write(`owner ${JSON.stringify({ tookOverFrom: lock.tookOverFrom?.pid ?? null })}\n`);
  await closed;
  await lock.release();
} catch (err) {
  if (!(err instanceof DataDirInUseError)) throw err;
  process.stdout.write(`refused ${err.message}\n`);
  process.exit(3);
}
