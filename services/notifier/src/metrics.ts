import type { ConsumerStats } from '@chat/backbone';
import { registerPoolMetrics, type PoolOccupancy } from '@chat/observability';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The notifier's own metrics registry (served on its admin port). */
export interface NotifierMetrics {
  registry: Registry;
  /** Fanout runs by path (`backbone` or `sweeper`) and outcome (`done`, `retry`, `failed`, `dead`). */
  fanouts: Counter<'path' | 'outcome'>;
  notificationsWritten: Counter;
  deniedTargets: Counter;
  /** Message commit to its notifications' commit. */
  fanoutLatency: Histogram;
  /** Webhook deliveries by outcome (`delivered`, `failed`, `dead`, `skipped`, `redelivered`). */
  webhookDeliveries: Counter<'outcome'>;
}

/** What the notifier's gauges read at scrape time. */
export interface NotifierMetricSources {
  /** Mention fanout rows pending and dead (dead rows are the dead letters operators look at). */
  fanoutCounts(): Promise<{ pending: number; dead: number }>;
  /** The consumer group's numbers, once the consumer runs. @defaultValue none */
  consumerStats?(): Promise<ConsumerStats | undefined>;
  /** Webhook lanes behind and dead letters kept. @defaultValue none */
  webhookCounts?(): Promise<{ lanesBehind: number; deadLetters: number }>;
  /** The database pool's occupancy (see `registerPoolMetrics`). @defaultValue none */
  poolStats?(): PoolOccupancy | undefined;
}

/** Creates the metrics; the gauges read `sources` at scrape time. */
export function createNotifierMetrics(sources: NotifierMetricSources): NotifierMetrics {
  const consumerStats = sources.consumerStats ?? (async () => undefined);
  const webhookCounts = sources.webhookCounts ?? (async () => ({ lanesBehind: 0, deadLetters: 0 }));
  const registry = new Registry();
  registerPoolMetrics(registry, () => sources.poolStats?.());
  new Gauge({
    name: 'chat_notifier_webhook_backlog',
    help: 'Webhook lanes with notifications not yet delivered (measure="lanes_behind"), and dead letters kept (measure="dead_letters")',
    labelNames: ['measure'],
    registers: [registry],
    async collect() {
      const counts = await webhookCounts();
      this.set({ measure: 'lanes_behind' }, counts.lanesBehind);
      this.set({ measure: 'dead_letters' }, counts.deadLetters);
    },
  });
  new Gauge({
    name: 'chat_notifier_backbone_group',
    help: 'The notifier consumer group on the messages channel: lag (not yet delivered to the group; -1 when Redis cannot tell) and pending (delivered, not acknowledged)',
    labelNames: ['measure'],
    registers: [registry],
    async collect() {
      const stats = await consumerStats().catch(() => undefined);
      if (!stats) return;
      this.set({ measure: 'lag' }, stats.lag ?? -1);
      this.set({ measure: 'pending' }, stats.pending);
    },
  });
  new Gauge({
    name: 'chat_notifier_fanout_rows',
    help: 'Mention fanout rows waiting (state="pending") and given up on (state="dead")',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await sources.fanoutCounts();
      this.set({ state: 'pending' }, counts.pending);
      this.set({ state: 'dead' }, counts.dead);
    },
  });
  return {
    registry,
    fanouts: new Counter({ name: 'chat_notifier_fanouts_total', help: 'Mention fanout runs by path and outcome', labelNames: ['path', 'outcome'], registers: [registry] }),
    notificationsWritten: new Counter({ name: 'chat_notifier_notifications_written_total', help: 'Notifications committed', registers: [registry] }),
    deniedTargets: new Counter({ name: 'chat_notifier_denied_targets_total', help: 'Mention targets that could not read the scope at fanout', registers: [registry] }),
    webhookDeliveries: new Counter({
      name: 'chat_notifier_webhook_deliveries_total',
      help: 'Webhook deliveries by outcome: delivered (2xx), failed (to retry), dead (dead-lettered), skipped (the principal may no longer read the repository), redelivered',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    fanoutLatency: new Histogram({
      name: 'chat_notifier_fanout_latency_seconds',
      help: 'Time from a message commit to the commit of its notifications',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
}
