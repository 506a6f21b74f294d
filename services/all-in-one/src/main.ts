/**
 * The all-in-one process: API, stream gateway and notifier with an embedded dev-core, on PGlite and
 * the in-process backbone by default, or on PostgreSQL and Redis when DATABASE_URL and REDIS_URL are
 * set. Several of these on one PostgreSQL, Redis and core form a cluster.
 */
import { once } from 'node:events';
import { loadConfigOrExit } from '@chat/service-config';
import { DataDirInUseError } from '@chat/store';
import { loadAllInOneConfig } from './config.ts';
import { startAllInOne } from './all-in-one.ts';

const config = loadConfigOrExit(() => loadAllInOneConfig(process.env, { terminal: process.stdout.isTTY === true }));
const running = await startAllInOne(config).catch((err: unknown) => {
  // A folder another process owns is a plain situation to explain; anything else keeps its stack.
  process.stderr.write(`chat: cannot start: ${err instanceof DataDirInUseError ? err.message : (err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
process.stdout.write(running.banner);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    void running.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
await once(process, 'beforeExit');
