import type { Backbone } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { OutboxRepository } from '@chat/store';
import { startPublishSpan, type PublishSpan } from '@chat/tracing';
import { committedMessageEvents } from '@chat/wire-format';
import type { CommittedEntry, CommittedMessagePublisher } from './outbox.types.ts';

/**
 * Publishes each committed message right after its commit and then clears its outbox entry. Entries
 * committed in the same tick go out as one backbone call, in commit order; their outbox rows are
 * deleted together with those of the next few ticks. If the process dies before either, or the
 * backbone is down, the entries stay and the relay publishes them (consumers drop a repeat by seq).
 *
 * With tracing on, each entry's publish is a span in its own request's trace (the request's span is
 * active when the entry is handed over), and its events carry that span's traceparent.
 */
export class AfterCommitPublisher implements CommittedMessagePublisher {
  private pending: Pending[] = [];
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
    this.pending.push({ ...entry, settle, publish: startPublishSpan('messages', entry.roomId, entry.seq) });
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

  private async publish(batch: Pending[]): Promise<void> {
    const events = batch.flatMap((e) => committedMessageEvents(e, e.payload, e.publish?.traceparent));
    try {
      await this.backbone.publish(events);
    } catch (err) {
      for (const e of batch) e.publish?.fail(err);
      throw err;
    }
    for (const e of batch) {
      e.publish?.published(events.length);
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

/** An entry waiting for its turn's backbone call, with its publish span (undefined while tracing is off). */
type Pending = CommittedEntry & { settle: () => void; publish: PublishSpan | undefined };
