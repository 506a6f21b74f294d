import { createCoreCallHistogram, createHttpDurationHistogram, registerPoolMetrics, type PoolOccupancy } from '@chat/observability';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OutboxRepository } from '@chat/store';

/** The API's own Prometheus registry and the instruments its layers record into. */
export interface ApiMetrics {
  registry: Registry;
  httpDuration: ReturnType<typeof createHttpDurationHistogram>;
  appends: Counter<'outcome'>;
  coreCalls: Histogram<'operation' | 'outcome'>;
}

/**
 * Creates the registry; the outbox depth and the database pool's occupancy (`poolStats`, see
 * `registerPoolMetrics`) are read at scrape time.
 */
export function createApiMetrics(
  options: { outbox?: OutboxRepository; poolStats?: () => PoolOccupancy | undefined; defaultMetrics?: boolean } = {},
): ApiMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'chat_api_' });
  registerPoolMetrics(registry, options.poolStats ?? (() => undefined));
  const outbox = options.outbox;
  if (outbox) {
    new Gauge({
      name: 'chat_outbox_depth',
      help: 'Committed events waiting in the outbox for the relay (should stay near 0)',
      registers: [registry],
      async collect() {
        this.set(await outbox.depth());
      },
    });
  }
  return {
    registry,
    httpDuration: createHttpDurationHistogram(registry),
    appends: new Counter({
      name: 'chat_appends_total',
      help: 'Append requests by outcome: created, replayed (exact retry), rate_limited, rejected',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    coreCalls: createCoreCallHistogram(registry),
  };
}
