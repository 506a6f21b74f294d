import type { Backbone, BackboneEvent } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { OutboxEntry, OutboxRepository } from '@chat/store';
import { startRelaySpan } from '@chat/tracing';
import { committedMessageEventsFromPayload, storedMessageEvents } from '@chat/wire-format';
import type { OutboxSettings } from './outbox.types.ts';
import { PeriodicTask } from '../maintenance/periodic-task.ts';

/**
 * Publishes outbox entries that nobody published right after commit (a crash between commit and
 * publish, or a backbone outage) and removes them. Entries are published in outbox order, which is
 * commit order within a room. A repeat is harmless: consumers drop what they already have by seq.
 */
export class OutboxRelay {
  private readonly schedule: PeriodicTask;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly backbone: Backbone,
    private readonly logger: Logger,
    private readonly settings: Pick<OutboxSettings, 'graceMs' | 'intervalMs' | 'batchSize'>,
    private readonly clock: () => Date,
  ) {
    this.schedule = new PeriodicTask(settings.intervalMs, () => this.sweep(), (err) => this.logger.warn({ err }, 'outbox sweep failed; retrying'));
  }

  start(): void {
    this.schedule.start();
  }

  /**
   * Publishes every stale entry; returns how many it published. Relays of several API processes
   * take turns (the store's relay turn): one that finds the turn taken sweeps nothing this time.
   */
  async sweep(): Promise<number> {
    let total = 0;
    for (;;) {
      const published = await this.outbox.duringRelayTurn(async (turn) => {
        const entries = await turn.listStale(new Date(this.clock().getTime() - this.settings.graceMs), this.settings.batchSize);
        if (entries.length > 0) {
          await this.publish(entries);
          await turn.remove(entries.map((e) => e.id));
        }
        return entries.length;
      });
      total += published ?? 0;
      if (published === undefined || published < this.settings.batchSize) return total;
    }
  }

  /** One backbone call for a sweep's entries, in a trace of its own when tracing is on (the outbox keeps no request's trace). */
  private async publish(entries: OutboxEntry[]): Promise<void> {
    const relay = startRelaySpan(entries.length);
    const events = entries.flatMap((e) => this.eventsOf(e, relay?.traceparent));
    try {
      await this.backbone.publish(events);
    } catch (err) {
      relay?.fail(err);
      throw err;
    }
    relay?.published(events.length);
  }

  /** A message entry is published as the API publishes it (with its `mentions` event, if any). */
  private eventsOf(entry: OutboxEntry, traceparent: string | undefined): BackboneEvent[] {
    if (entry.message !== null) return storedMessageEvents(entry.message, traceparent);
    if (entry.channel === 'messages') {
      try {
        return committedMessageEventsFromPayload(entry.scopeKey, entry.seq, entry.payload, traceparent);
      } catch (err) {
        // Not ours to judge: the gateways get the entry as it is, and the sweeper still finds its mentions.
        this.logger.warn({ err, outboxId: entry.id }, 'outbox message payload unreadable; published without its mentions event');
      }
    }
    const event: BackboneEvent = { channel: entry.channel, scopeKey: entry.scopeKey, seq: entry.seq, data: entry.payload };
    if (traceparent !== undefined) event.traceparent = traceparent;
    return [event];
  }

  async stop(): Promise<void> {
    await this.schedule.stop();
  }
}
