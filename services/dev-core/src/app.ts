import type { RequestListener } from 'node:http';
import { createRoutePipeline } from '@chat/http-kit';
import { createHttpDurationHistogram } from '@chat/observability';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import type { DevCoreContext } from './domain/dev-core-context.ts';
import { devCoreRoutes } from './routes/dev-core-routes.ts';
import { notFound } from './routes/http-errors.ts';

/**
 * The logger of the pipeline's request lines. They are detail for dev-core (chat logs its own request,
 * and asks core on each): written when the level is debug or finer, and left out at info.
 */
function requestLineLogger(logger: Logger): Logger {
  return logger.isLevelEnabled('info') && !logger.isLevelEnabled('debug') ? logger.child({}, { level: 'warn' }) : logger;
}

/**
 * dev-core's request listener: its one route table, served by the route pipeline, and core's 404 for
 * any other path. dev-core exports no metrics: the pipeline's latency samples go to a registry of its own.
 */
export function createDevCoreListener(ctx: DevCoreContext): RequestListener {
  const services = { logger: requestLineLogger(ctx.logger), httpDuration: createHttpDurationHistogram(new Registry()) };
  return createRoutePipeline([devCoreRoutes(ctx, services)], { notFound }).listener;
}
