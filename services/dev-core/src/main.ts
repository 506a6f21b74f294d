import { ConfigError } from '@chat/service-config';
import { loadConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { startDevCore } from './server.ts';

/** CLI: `pnpm dev-core`. Prints the URL (the port is only known here when DEV_CORE_PORT=0). */
async function run(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = createLogger(config.log.level);
  const devCore = await startDevCore({
    port: config.http.port,
    host: config.http.host,
    limits: config.http.limits,
    ...(config.fixturePath === undefined ? {} : { fixturePath: config.fixturePath }),
    ...(config.keysDir === undefined ? {} : { keysDir: config.keysDir }),
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
  process.exit(err instanceof ConfigError ? 2 : 1);
});
