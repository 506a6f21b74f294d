import type { Backbone } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { OutboxRepository } from '@chat/store';
import type { CommittedMessagePublisher } from './committed-message-publisher.ts';

/**
 * Publishes each committed message right after its commit and then clears its outbox entry. If the
 * process dies in between, or the backbone is down, the entry stays and the relay publishes it.
 */
export class BackbonePublisher implements CommittedMessagePublisher {
  constructor(
    private readonly backbone: Backbone,
    private readonly outbox: OutboxRepository,
    private readonly logger: Logger,
  ) {}

  publishCommitted(entry: { outboxId: number; roomId: string; seq: number; message: unknown }): void {
    void this.publish(entry).catch((err: unknown) => {
      this.logger.warn({ err, roomId: entry.roomId, seq: entry.seq }, 'publish after commit failed; the outbox relay will retry');
    });
  }

  private async publish(entry: { outboxId: number; roomId: string; seq: number; message: unknown }): Promise<void> {
    await this.backbone.publish([{ channel: 'messages', scopeKey: entry.roomId, seq: entry.seq, data: JSON.stringify(entry.message) }]);
    await this.outbox.remove([entry.outboxId]);
  }
}
