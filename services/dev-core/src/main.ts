import { loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { startDevCore } from './server.ts';

/** CLI: `pnpm dev-core`. Prints the URL (the port is only known here when DEV_CORE_PORT=0). */
async function run(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const devCore = await startDevCore({
    port: config.port,
    host: config.host,
    ...(config.fixturePath === undefined ? {} : { fixturePath: config.fixturePath }),
    ...(config.publicUrl === undefined ? {} : { publicUrl: config.publicUrl }),
    serviceToken: config.serviceToken,
    logger,
  });
  console.log(`dev-core listening on ${devCore.url}`);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void devCore.close().then(() => process.exit(0));
    });
  }
}

run().catch((err: unknown) => {
  console.error(`dev-core failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
