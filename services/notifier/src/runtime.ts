import { hostname } from 'node:os';
import type { Consumer } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { ProcessResources } from '@chat/process-resources';
import type { Store } from '@chat/store';
import { newUlid } from '@chat/contracts';
import { createNotifierMetrics, type NotifierMetrics } from './metrics.ts';
import { FanoutProcessor, type FanoutProcessorSettings } from './workers/fanout-processor.ts';
import { FanoutSweeper, type FanoutSweeperSettings } from './workers/fanout-sweeper.worker.ts';
import { startMentionsConsumer, type MentionsConsumerSettings } from './workers/mentions-consumer.worker.ts';

/** Tuning of one notifier; every field has a default (see `NOTIFIER_DEFAULTS`). */
export interface NotifierSettings {
  consumer: MentionsConsumerSettings;
  sweeper: FanoutSweeperSettings;
  processor: FanoutProcessorSettings;
}

export interface NotifierSettingsInput {
  consumer?: Partial<MentionsConsumerSettings>;
  /** The sweeper's lease is the processor's `leaseMs`. */
  sweeper?: Partial<Omit<FanoutSweeperSettings, 'leaseMs'>>;
  processor?: Partial<FanoutProcessorSettings>;
}

export const NOTIFIER_DEFAULTS = {
  consumer: { group: 'notifier', batchSize: 64, concurrency: 8, claimIdleMs: 30_000, maxDeliveries: 5, lingerMs: 5 },
  sweeper: { intervalMs: 1000, graceMs: 5000, batchSize: 100, concurrency: 8 },
  processor: { leaseMs: 30_000, maxAttempts: 5, retryDelayMs: 1000, maxRetryDelayMs: 60_000 },
} as const;

/**
 * What the notifier takes from the process's resources: the store, the backbone mentions arrive on
 * (Redis Streams, or the in-process backbone in the all-in-one), and core's client, which it asks
 * live whether each target may read the message's scope.
 */
export type NotifierResources = Pick<ProcessResources, 'store' | 'backbone' | 'core'>;

export interface NotifierRuntimeOptions {
  resources: NotifierResources;
  logger: Logger;
  settings?: NotifierSettingsInput;
  /** @defaultValue () => new Date() */
  clock?: () => Date;
}

export interface NotifierRuntime {
  store: Store;
  metrics: NotifierMetrics;
  processor: FanoutProcessor;
  sweeper: FanoutSweeper;
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
  const { store, backbone, core } = options.resources;
  let consumer: Consumer | undefined;
  const metrics = createNotifierMetrics(
    () => store.mentionFanout.counts(),
    async () => consumer?.stats(),
  );
  const processor = new FanoutProcessor({ store, core, backbone, logger, clock }, settings.processor, metrics);
  const sweeper = new FanoutSweeper(store, processor, settings.sweeper, logger, clock);
  return {
    store,
    metrics,
    processor,
    sweeper,
    async start() {
      consumer = await startMentionsConsumer(backbone, processor, settings.consumer, logger);
      sweeper.start();
      logger.info({ group: settings.consumer.group, consumer: settings.consumer.consumer }, 'notifier started');
    },
    async stop() {
      await Promise.all([consumer?.stop(), sweeper.stop()]);
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
  };
}
