import type { Backbone, BackboneEvent } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { OutboxRepository } from '@chat/store';
import type { CommittedMessagePublisher } from './committed-message-publisher.ts';

interface CommittedEntry {
  outboxId: number;
  roomId: string;
  seq: number;
  payload: string;
}

/**
 * Publishes each committed message right after its commit and then clears its outbox entry. Entries
 * committed in the same tick go out as one backbone call and one outbox delete, in commit order. If
 * the process dies in between, or the backbone is down, the entries stay and the relay publishes them.
 */
export class BackbonePublisher implements CommittedMessagePublisher {
  private pending: Array<CommittedEntry & { settle: () => void }> = [];
  private scheduled = false;

  constructor(
    private readonly backbone: Backbone,
    private readonly outbox: OutboxRepository,
    private readonly logger: Logger,
  ) {}

  publishCommitted(entry: CommittedEntry): Promise<void> {
    let settle = () => undefined as void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    this.pending.push({ ...entry, settle });
    if (this.scheduled) return settled;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.pending;
      this.pending = [];
      void this.publish(batch)
        .catch((err: unknown) => {
          this.logger.warn({ err, entries: batch.length }, 'publish after commit failed; the outbox relay will retry');
        })
        .finally(() => {
          for (const e of batch) e.settle();
        });
    });
    return settled;
  }

  private async publish(batch: Array<CommittedEntry & { settle: () => void }>): Promise<void> {
    const events: BackboneEvent[] = batch.map((e) => ({ channel: 'messages', scopeKey: e.roomId, seq: e.seq, data: e.payload }));
    await this.backbone.publish(events);
    // Settled before the outbox delete: a crash here leaves the entry, and the relay publishes it again.
    for (const e of batch) e.settle();
    await this.outbox.remove(batch.map((e) => e.outboxId));
  }
}
