/**
 * The API alone (distributed deployment): PostgreSQL, Redis and an external core. SIGTERM stops
 * accepting, finishes in-flight requests, stops the outbox relay, sends the last spans (tracing on),
 * then exits.
 */
import { loadConfigOrExit } from '@chat/service-config';
import { createLogger } from '@chat/observability';
import { startTracing } from '@chat/tracing';
import { startApiService } from './api-service.ts';
import { loadApiConfig } from './config.ts';

const config = loadConfigOrExit(() => loadApiConfig(process.env));
const logger = createLogger({ name: 'chat-api', level: config.log.level });
const tracing = await startTracing(config.tracing, logger);
const service = await startApiService(config, logger);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info('SIGTERM: draining');
  await service.shutdown();
  // Last, so the drained requests' spans go out with the rest.
  await tracing.shutdown();
  logger.info('stopped');
  process.exit(0);
}
process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
