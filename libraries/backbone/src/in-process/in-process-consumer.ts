import { forEachByKey } from '../concurrency.ts';
import type { Consumer, ConsumerStats, DeliveredEvent, ResolvedConsumeOptions } from '../backbone.ts';
import type { ChannelLog } from './channel-log.ts';

/** XAUTOCLAIM-like takeovers per pass, as a multiple of the batch size (mirrors the Redis consumer). */
const CLAIM_BATCHES_PER_PASS = 10;

/** A consumer-group member on a {@link ChannelLog}, with the Redis consumer's loop and rules. */
export class InProcessConsumer implements Consumer {
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private nextClaimAt = 0;
  private readonly counters = { acked: 0, reclaimed: 0, deadLettered: 0, failed: 0 };

  constructor(
    private readonly log: ChannelLog,
    private readonly opts: ResolvedConsumeOptions,
    private readonly handler: (e: DeliveredEvent) => Promise<void>,
  ) {
    log.ensureGroup(opts.group);
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.log.wake();
    await this.loop;
  }

  async stats(): Promise<ConsumerStats> {
    return { ...this.log.groupStats(this.opts.group), ...this.counters };
  }

  private async run(): Promise<void> {
    const { group, consumer, batchSize, blockMs, claimIdleMs } = this.opts;
    while (!this.stopping) {
      if (Date.now() >= this.nextClaimAt) {
        const claimed = this.log.claimIdle(group, consumer, claimIdleMs, batchSize * CLAIM_BATCHES_PER_PASS);
        for (const { event, deliveries } of claimed) {
          this.counters.reclaimed++;
          await this.process(event, deliveries);
        }
        this.nextClaimAt = Date.now() + Math.min(Math.max(claimIdleMs / 2, 50), 10_000);
      }
      const batch = this.log.readNew(group, consumer, batchSize);
      if (batch.length === 0) {
        await this.log.waitForEntries(Math.min(blockMs, Math.max(this.nextClaimAt - Date.now(), 1)));
        continue;
      }
      // Scopes run side by side; the events of one scope keep their order.
      await forEachByKey(batch, this.opts.concurrency, (event) => event.scopeKey, (event) => this.process(event, 1));
    }
  }

  private async process(event: DeliveredEvent, deliveries: number): Promise<void> {
    const { group, consumer, maxDeliveries } = this.opts;
    if (deliveries > maxDeliveries) {
      this.log.deadLetter({ ...event, group, consumer, deliveries, deadLetteredAt: Date.now() });
      this.counters.deadLettered++;
      return;
    }
    try {
      await this.handler(event);
    } catch (err) {
      // Left pending on purpose: it comes back through the claim pass after claimIdleMs.
      this.counters.failed++;
      this.opts.onError?.(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    this.log.ack(group, event.entryId);
    this.counters.acked++;
  }
}
