/**
 * The standalone stream gateway: `pnpm --filter @chat/stream-gateway start`. SIGTERM/SIGINT hand
 * every stream off over GATEWAY_DRAIN_MS, then the process exits.
 */
import { connectionRoom, createLimitedServer } from '@chat/http-server';
import { createLogger, startAdminServer } from '@chat/observability';
import { openProcessResources } from '@chat/process-resources';
import { loadConfigOrExit } from '@chat/service-config';
import { startTracing } from '@chat/tracing';
import { once } from 'node:events';
import { loadGatewayConfig } from './config.ts';
import { attachStreamFront } from './http/stream-front.ts';
import { createGatewayRuntime } from './runtime.ts';

/** The share of HTTP_MAX_CONNECTIONS above which the pod reports itself not ready. */
const CONNECTION_READY_SHARE = 0.99;

const config = loadConfigOrExit(() => loadGatewayConfig(process.env));
const logger = createLogger({ name: 'stream-gateway', level: config.log.level });
const tracing = await startTracing(config.tracing, logger);
const resources = await openProcessResources({ ...config, streamCaps: config.gateway.caps }, logger);
const gateway = createGatewayRuntime({ resources, logger, engine: config.gateway.engine });
const server = createLimitedServer(gateway.pipeline.listener, config.http.limits);
attachStreamFront(server, { pipeline: gateway.pipeline, headersTimeoutMs: config.http.limits.headersTimeoutMs });
server.listen(config.http.port, config.http.host);
await once(server, 'listening');
let draining = false;
const admin = await startAdminServer({
  port: config.admin.port,
  host: config.admin.host,
  registry: gateway.metrics.registry,
  isDraining: () => draining,
  // Out of rotation a little before its connection cap, where new sockets would be closed; far
  // above the autoscaler's target, so only a pod the fleet failed to relieve reaches it.
  checks: [...resources.readinessChecks(), { name: 'connections', check: connectionRoom(server, Math.floor(config.http.limits.maxConnections * CONNECTION_READY_SHARE)) }],
  logger,
});
logger.info({ port: config.http.port, admin: admin.url, database: resources.database.kind, backbone: config.redis.url ? 'redis' : 'in-process' }, 'stream gateway listening');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  draining = true;
  logger.info({ signal, drainMs: config.gateway.drainMs }, 'draining streams');
  server.close();
  await gateway.drain(config.gateway.drainMs);
  await gateway.close();
  await resources.close();
  await admin.close();
  // Last, so the deliveries of the drain are exported with the rest.
  await tracing.shutdown();
  logger.info('stream gateway stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
