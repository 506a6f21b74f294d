import type { Backbone, Consumer, DeliveredEvent } from '@chat/backbone';
import { parseMentionEventData } from '@chat/wire-format';
import type { Logger } from '@chat/observability';
import { traceEventHandling } from '@chat/tracing';
import type { FanoutProcessor } from './fanout-processor.ts';

export interface MentionsConsumerSettings {
  /** Consumer group shared by every notifier. @defaultValue 'notifier' */
  group: string;
  /** This process's member name, unique in the group. */
  consumer: string;
  /** @defaultValue 64 */
  batchSize: number;
  /** Messages fanned out at once (their notifications carry their own per-inbox order). */
  concurrency: number;
  /** Entries a crashed member left pending are taken over after this long. @defaultValue 30000 */
  claimIdleMs: number;
  /** Deliveries of one entry before the backbone dead-letters it. @defaultValue 5 */
  maxDeliveries: number;
  /**
   * Pause after a short read, so each read and its acknowledgement carry several events instead of
   * one round trip each. Adds at most this much to mention latency. @defaultValue 5
   */
  lingerMs: number;
}

/**
 * The low-latency path: every committed message that mentions anyone arrives as a `mentions` event
 * through the `notifier` consumer group, and its fanout row is claimed and run. Messages without
 * mentions never reach the notifier. The row, not the event, is the record: an event lost in Redis
 * leaves the row to the sweeper, and a row already done or held by another worker makes the event a
 * no-op, as does a row behind an earlier pending row of its room (whoever runs that one runs this one
 * next). Stopping the consumer also waits for the room drains it started.
 *
 * A traced event (tracing on) is handled in a span `process mentions` under its publish span, so the
 * fanout's calls to core and its notifications' publish join the append's trace.
 */
export async function startMentionsConsumer(
  backbone: Backbone,
  processor: FanoutProcessor,
  settings: MentionsConsumerSettings,
  logger: Logger,
): Promise<Consumer> {
  const consumer = await backbone.consume(
    {
      channel: 'mentions',
      group: settings.group,
      consumer: settings.consumer,
      batchSize: settings.batchSize,
      concurrency: settings.concurrency,
      claimIdleMs: settings.claimIdleMs,
      maxDeliveries: settings.maxDeliveries,
      lingerMs: settings.lingerMs,
      onError: (err) => logger.warn({ err }, 'mentions consumer error'),
    },
    async (event: DeliveredEvent) => {
      await traceEventHandling(event, () => processor.claimAndProcess(parseMentionEventData(event.data).messageId, event.scopeKey), (outcome) => outcome ?? 'none');
    },
  );
  return {
    stats: () => consumer.stats(),
    async stop() {
      await consumer.stop();
      await processor.stop();
    },
  };
}
