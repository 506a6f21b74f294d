import type { Backbone } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { OutboxRepository } from '@chat/store';
import { committedMessageEvents } from '@chat/wire-format';
import type { CommittedEntry, CommittedMessagePublisher } from './outbox.types.ts';

/**
 * Publishes each committed message right after its commit and then clears its outbox entry. Entries
 * committed in the same tick go out as one backbone call, in commit order; their outbox rows are
 * deleted together with those of the next few ticks. If the process dies before either, or the
 * backbone is down, the entries stay and the relay publishes them (consumers drop a repeat by seq).
 */
export class AfterCommitPublisher implements CommittedMessagePublisher {
  private pending: Array<CommittedEntry & { settle: () => void }> = [];
  private scheduled = false;
  private published: number[] = [];
  private removalTimer: NodeJS.Timeout | undefined;
  private removing: Promise<void> = Promise.resolve();

  /** `removalDelayMs`: see OutboxSettings. */
  constructor(
    private readonly backbone: Backbone,
    private readonly outbox: OutboxRepository,
    private readonly logger: Logger,
    private readonly removalDelayMs: number,
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

  /** Deletes the outbox rows of everything published so far; for shutdown. */
  async flush(): Promise<void> {
    clearTimeout(this.removalTimer);
    this.removalTimer = undefined;
    this.removeNow();
    await this.removing;
  }

  private async publish(batch: Array<CommittedEntry & { settle: () => void }>): Promise<void> {
    const events = batch.flatMap((e) => committedMessageEvents(e, e.payload));
    await this.backbone.publish(events);
    for (const e of batch) {
      e.settle();
      this.published.push(e.outboxId);
    }
    this.removalTimer ??= setTimeout(() => {
      this.removalTimer = undefined;
      this.removeNow();
    }, this.removalDelayMs);
  }

  private removeNow(): void {
    const ids = this.published;
    if (ids.length === 0) return;
    this.published = [];
    // A failed delete leaves the rows to the relay, which publishes them again: a harmless repeat.
    this.removing = this.removing
      .then(() => this.outbox.remove(ids))
      .catch((err: unknown) => this.logger.warn({ err, entries: ids.length }, 'outbox cleanup failed; the relay will publish these entries again'));
  }
}
