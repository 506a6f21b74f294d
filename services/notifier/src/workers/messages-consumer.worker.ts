import type { Backbone, Consumer, DeliveredEvent } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { FanoutProcessor } from './fanout-processor.ts';

export interface MessagesConsumerSettings {
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
   * Pause after a short read, so each read and its acknowledgement carry several messages: every
   * message passes through here, and one round trip per message was most of this worker's CPU.
   * Adds at most this much to mention latency. @defaultValue 5
   */
  lingerMs: number;
}

/** The part of a `messages` event this worker reads (the payload is a MessageResponse). */
interface MessageEventData {
  messageId?: unknown;
  mentions?: unknown;
}

/**
 * The low-latency path: every committed message arrives from the backbone's `messages` channel
 * through the `notifier` consumer group; one with mentions has its fan-out row claimed and run.
 * The row, not the event, is the record: an event lost in Redis leaves the row to the sweeper, and a
 * row already done or held by another worker makes the event a no-op.
 */
export async function startMessagesConsumer(
  backbone: Backbone,
  processor: FanoutProcessor,
  settings: MessagesConsumerSettings,
  logger: Logger,
): Promise<Consumer> {
  return backbone.consume(
    {
      channel: 'messages',
      group: settings.group,
      consumer: settings.consumer,
      batchSize: settings.batchSize,
      concurrency: settings.concurrency,
      claimIdleMs: settings.claimIdleMs,
      maxDeliveries: settings.maxDeliveries,
      lingerMs: settings.lingerMs,
      onError: (err) => logger.warn({ err }, 'messages consumer error'),
    },
    async (event: DeliveredEvent) => {
      const data = JSON.parse(event.data) as MessageEventData;
      if (!Array.isArray(data.mentions) || data.mentions.length === 0) return;
      if (typeof data.messageId !== 'string') throw new Error(`messages event ${event.entryId} has no messageId`);
      await processor.claimAndProcess(data.messageId);
    },
  );
}
