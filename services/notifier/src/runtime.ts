import { hostname } from 'node:os';
import type { Consumer } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { ProcessResources } from '@chat/process-resources';
import type { Store } from '@chat/store';
import { newUlid } from '@chat/contracts';
import { InProcessLaneQueue, OutboundAddressGuard, WebhookDeliverer, WebhookSender, type LaneQueue, type OutboundAddressPolicy, type WebhookDelivererSettings } from '@chat/webhooks';
import { createNotifierMetrics, type NotifierMetrics } from './metrics.ts';
import { FanoutProcessor, type FanoutProcessorSettings } from './workers/fanout-processor.ts';
import { FanoutSweeper, type FanoutSweeperSettings } from './workers/fanout-sweeper.worker.ts';
import { startMentionsConsumer, type MentionsConsumerSettings } from './workers/mentions-consumer.worker.ts';

/** Tuning of one notifier; every field has a default (see `NOTIFIER_DEFAULTS`). */
export interface NotifierSettings {
  consumer: MentionsConsumerSettings;
  sweeper: FanoutSweeperSettings;
  processor: FanoutProcessorSettings;
  webhooks: WebhookSettings;
}

/** Webhook delivery: where it may send, how long it waits, how it retries and how much runs at once. */
export interface WebhookSettings extends WebhookDelivererSettings {
  addresses: OutboundAddressPolicy;
  /** Longest wait for a receiver's answer. */
  timeoutMs: number;
  /** Lanes delivering at once in this process. */
  concurrency: number;
}

export interface WebhookSettingsInput extends Partial<Omit<WebhookSettings, 'retry' | 'addresses'>> {
  retry?: Partial<WebhookSettings['retry']>;
  addresses?: Partial<OutboundAddressPolicy>;
}

export interface NotifierSettingsInput {
  consumer?: Partial<MentionsConsumerSettings>;
  /** The sweeper's lease is the processor's `leaseMs`. */
  sweeper?: Partial<Omit<FanoutSweeperSettings, 'leaseMs'>>;
  processor?: Partial<FanoutProcessorSettings>;
  webhooks?: WebhookSettingsInput;
}

export const NOTIFIER_DEFAULTS = {
  consumer: { group: 'notifier', batchSize: 64, concurrency: 8, claimIdleMs: 30_000, maxDeliveries: 5, lingerMs: 5 },
  sweeper: { intervalMs: 1000, graceMs: 5000, batchSize: 100, concurrency: 8 },
  processor: { leaseMs: 30_000, maxAttempts: 5, retryDelayMs: 1000, maxRetryDelayMs: 60_000 },
  webhooks: {
    addresses: { allowLoopback: false, allowedCidrs: [] as string[] },
    timeoutMs: 10_000,
    concurrency: 32,
    retry: { maxAttempts: 8, baseDelayMs: 1000, maxDelayMs: 3_600_000 },
    batchSize: 50,
    authorizationRetryMs: 2000,
    dispatchIntervalMs: 200,
    dispatchBatchSize: 1000,
    sweepIntervalMs: 1000,
  },
} as const;

/**
 * What the notifier takes from the process's resources: the store, the backbone mentions arrive on
 * (Redis Streams, or the in-process backbone in the all-in-one), and core's client, which it asks
 * live whether each target may read the message's scope.
 */
export type NotifierResources = Pick<ProcessResources, 'store' | 'backbone' | 'core' | 'cursors'>;

export interface NotifierRuntimeOptions {
  resources: NotifierResources;
  logger: Logger;
  settings?: NotifierSettingsInput;
  /** @defaultValue () => new Date() */
  clock?: () => Date;
  /**
   * Schedules webhook lane runs across processes (BullMQ over Redis).
   * @defaultValue in this process (the all-in-one, which has no Redis)
   */
  webhookQueue?: (settings: WebhookSettings, logger: Logger) => LaneQueue;
}

export interface NotifierRuntime {
  store: Store;
  metrics: NotifierMetrics;
  processor: FanoutProcessor;
  sweeper: FanoutSweeper;
  webhooks: WebhookDeliverer;
  /** Joins the consumer group and starts sweeping. */
  start(): Promise<void>;
  /** Stops taking work, settles the work in hand, and returns; the caller then closes the process resources. */
  stop(): Promise<void>;
}

/** Wires a notifier over the process's resources; nothing runs until `start()`. */
export function createNotifierRuntime(options: NotifierRuntimeOptions): NotifierRuntime {
  const settings = resolveSettings(options.settings);
  const logger = options.logger.child({ component: 'notifier' });
  const clock = options.clock ?? (() => new Date());
  const { store, backbone, core, cursors } = options.resources;
  let consumer: Consumer | undefined;
  const metrics = createNotifierMetrics({
    fanoutCounts: () => store.mentionFanout.counts(),
    consumerStats: async () => consumer?.stats(),
    webhookCounts: () => store.webhooks.counts(),
    poolStats: () => store.database.poolStats(),
  });
  const processor = new FanoutProcessor({ store, core, backbone, logger, clock }, settings.processor, metrics);
  const sweeper = new FanoutSweeper(store, processor, settings.sweeper, logger, clock);
  const webhookLog = logger.child({ component: 'webhooks' });
  // A connection per lane that may run at once: a lane waiting for another lane's socket would hold
  // its repository's deliveries back behind others'.
  const sender = new WebhookSender(new OutboundAddressGuard(settings.webhooks.addresses), {
    timeoutMs: settings.webhooks.timeoutMs,
    connectionsPerOrigin: settings.webhooks.concurrency,
  });
  const queue =
    options.webhookQueue?.(settings.webhooks, webhookLog) ??
    new InProcessLaneQueue(settings.webhooks.concurrency, (err, key) => webhookLog.warn({ err, webhookId: key.webhookId }, 'webhook lane run failed; it runs again'));
  const webhooks = new WebhookDeliverer(
    { store, core, cursors, sender, queue, logger: webhookLog, clock, observe: (outcome) => metrics.webhookDeliveries.inc({ outcome }) },
    settings.webhooks,
  );
  return {
    store,
    metrics,
    processor,
    sweeper,
    webhooks,
    async start() {
      consumer = await startMentionsConsumer(backbone, processor, settings.consumer, logger);
      sweeper.start();
      webhooks.start();
      logger.info({ group: settings.consumer.group, consumer: settings.consumer.consumer }, 'notifier started');
    },
    async stop() {
      await Promise.all([consumer?.stop(), sweeper.stop(), webhooks.stop()]);
      await sender.close();
      logger.info('notifier stopped');
    },
  };
}

function resolveSettings(input: NotifierSettingsInput = {}): NotifierSettings {
  const processor = { ...NOTIFIER_DEFAULTS.processor, ...input.processor };
  return {
    consumer: { ...NOTIFIER_DEFAULTS.consumer, consumer: `${hostname()}-${process.pid}-${newUlid()}`, ...input.consumer },
    sweeper: { ...NOTIFIER_DEFAULTS.sweeper, ...input.sweeper, leaseMs: processor.leaseMs },
    processor,
    webhooks: resolveWebhookSettings(input.webhooks),
  };
}

function resolveWebhookSettings(input: WebhookSettingsInput = {}): WebhookSettings {
  const defaults = NOTIFIER_DEFAULTS.webhooks;
  const timeoutMs = input.timeoutMs ?? defaults.timeoutMs;
  return {
    ...defaults,
    // Renewed after each delivery: two sends at their timeout, so a crashed notifier's lanes wait little.
    leaseMs: 2 * timeoutMs + 5000,
    ...input,
    addresses: { ...defaults.addresses, ...input.addresses },
    retry: { ...defaults.retry, ...input.retry },
  };
}
