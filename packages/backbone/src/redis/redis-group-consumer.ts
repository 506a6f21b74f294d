import type { Redis } from 'ioredis';
import type { Consumer, ConsumerStats, DeliveredEvent, ResolvedConsumeOptions } from '../backbone.ts';
import { forEachByKey } from '../concurrency.ts';
import { flatToRecord, sleep, waitReady, withDeadline } from './redis-connection.ts';
import { eventFields, toDeliveredEvent, type RawEntry, type RawStreamReply } from './stream-entry.ts';
import type { StreamKeys } from './stream-keys.ts';

export interface GroupConsumerSettings {
  keys: StreamKeys;
  opts: ResolvedConsumeOptions;
  /** Deadline of non-blocking commands. */
  timeoutMs: number;
  graceMs: number;
  deadLetterMaxLength: number;
}

interface HandledEntry {
  partition: number;
  id: string;
}

/** XAUTOCLAIM rounds per partition per pass: bounds one pass so new entries are not starved. */
const CLAIM_ROUNDS_PER_PASS = 10;

/** Creates the group on every partition (from the oldest retained entry); an existing group is kept. */
export async function ensureGroup(redis: Redis, streamKeys: string[], group: string): Promise<void> {
  const pipeline = redis.pipeline();
  for (const key of streamKeys) pipeline.xgroup('CREATE', key, group, '0', 'MKSTREAM');
  for (const [err] of (await pipeline.exec()) ?? []) {
    if (err && !String(err.message).startsWith('BUSYGROUP')) throw err;
  }
}

/** Group-wide pending and lag over all partitions, from XINFO GROUPS. */
export async function groupStats(redis: Redis, streamKeys: string[], group: string): Promise<{ pending: number; lag: number | null }> {
  const pipeline = redis.pipeline();
  for (const key of streamKeys) pipeline.xinfo('GROUPS', key);
  let pending = 0;
  let lag: number | null = 0;
  for (const [err, groups] of (await pipeline.exec()) ?? []) {
    if (err) throw err;
    const info = (groups as unknown[]).map(flatToRecord).find((g) => g['name'] === group);
    if (!info) continue;
    pending += Number(info['pending'] ?? 0);
    const partitionLag = info['lag'];
    lag = lag === null || partitionLag === null || partitionLag === undefined ? null : lag + Number(partitionLag);
  }
  return { pending, lag };
}

/**
 * One member of a consumer group: XREADGROUP over all partitions, one XACK round trip after the
 * handlers of a read, and a periodic XAUTOCLAIM pass that takes over entries idle for `claimIdleMs`
 * (their delivery counts read with XPENDING decide when an entry is dead-lettered instead of
 * handled again).
 */
export class RedisGroupConsumer implements Consumer {
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private nextClaimAt = 0;
  private readonly claimCursors: string[];
  private readonly streamKeys: string[];
  private readonly counters = { acked: 0, reclaimed: 0, deadLettered: 0, failed: 0 };

  constructor(
    private readonly conn: Redis,
    private readonly main: Redis,
    private readonly settings: GroupConsumerSettings,
    private readonly handler: (e: DeliveredEvent) => Promise<void>,
  ) {
    this.streamKeys = settings.keys.streams(settings.opts.channel);
    this.claimCursors = this.streamKeys.map(() => '0-0');
  }

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop;
    this.conn.disconnect();
  }

  async stats(): Promise<ConsumerStats> {
    const group = await withDeadline(
      this.main,
      groupStats(this.main, this.streamKeys, this.settings.opts.group),
      this.settings.timeoutMs,
    );
    return { ...group, ...this.counters };
  }

  private async run(): Promise<void> {
    const { opts, graceMs } = this.settings;
    let backoffMs = 50;
    while (!this.stopping) {
      try {
        await waitReady(this.conn, opts.blockMs + graceMs);
        if (Date.now() >= this.nextClaimAt) {
          await this.reclaimPass();
          this.nextClaimAt = Date.now() + Math.min(Math.max(opts.claimIdleMs / 2, 50), 10_000);
        }
        const read = this.conn.xreadgroup(
          'GROUP', opts.group, opts.consumer, 'COUNT', opts.batchSize, 'BLOCK', opts.blockMs,
          'STREAMS', ...this.streamKeys, ...this.streamKeys.map(() => '>'),
        );
        const reply = (await withDeadline(this.conn, read, opts.blockMs + graceMs)) as RawStreamReply | null;
        backoffMs = 50;
        const batch = (reply ?? []).flatMap(([key, entries]) => entries.map(([id, fields]) => ({ partition: this.streamKeys.indexOf(key), id, fields })));
        // Scopes run side by side; the entries of one scope keep their order.
        const scopeOf = (e: (typeof batch)[number]) => toDeliveredEvent(opts.channel, e.id, e.fields)?.scopeKey ?? e.id;
        const handled: HandledEntry[] = [];
        try {
          await forEachByKey(batch, opts.concurrency, scopeOf, async (e) => {
            if (await this.process(e.partition, e.id, e.fields, 1)) handled.push(e);
          });
        } finally {
          await this.acknowledge(handled);
        }
        // A short read means entries trickle in; waiting a moment lets the next read take several.
        if (opts.lingerMs > 0 && batch.length > 0 && batch.length < opts.batchSize && !this.stopping) await sleep(opts.lingerMs);
      } catch (err) {
        if (this.stopping) break;
        this.report(err);
        await sleep(backoffMs);
        // Redis restarted without its data: the group is gone; recreate it rather than fail forever.
        if (err instanceof Error && err.message.startsWith('NOGROUP')) {
          await withDeadline(this.conn, ensureGroup(this.conn, this.streamKeys, opts.group), this.settings.timeoutMs).catch(
            (cause: unknown) => this.report(cause),
          );
        }
        backoffMs = Math.min(backoffMs * 2, 2000);
      }
    }
  }

  /** Takes over idle pending entries of any member (including this one's own failed ones). */
  private async reclaimPass(): Promise<void> {
    const { opts, timeoutMs } = this.settings;
    for (let partition = 0; partition < this.streamKeys.length && !this.stopping; partition++) {
      const key = this.streamKeys[partition] as string;
      for (let round = 0; round < CLAIM_ROUNDS_PER_PASS && !this.stopping; round++) {
        const claim = this.conn.xautoclaim(key, opts.group, opts.consumer, opts.claimIdleMs, this.claimCursors[partition] ?? '0-0', 'COUNT', opts.batchSize);
        const [next, entries] = (await withDeadline(this.conn, claim, timeoutMs)) as [string, RawEntry[]];
        this.claimCursors[partition] = next;
        const deliveries = await this.deliveryCounts(key, entries.map(([id]) => id));
        const handled: HandledEntry[] = [];
        try {
          for (const [index, [id, fields]] of entries.entries()) {
            this.counters.reclaimed++;
            if (await this.process(partition, id, fields, deliveries[index] ?? opts.maxDeliveries + 1)) handled.push({ partition, id });
          }
        } finally {
          await this.acknowledge(handled);
        }
        if (next === '0-0') break;
      }
    }
  }

  private async deliveryCounts(key: string, ids: string[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const pipeline = this.conn.pipeline();
    for (const id of ids) pipeline.xpending(key, this.settings.opts.group, id, id, 1);
    const results = (await withDeadline(this.conn, pipeline.exec(), this.settings.timeoutMs)) ?? [];
    return results.map(([err, rows]) => {
      const row = (rows as unknown[][] | null)?.[0];
      return err || !row ? 0 : Number(row[3]);
    });
  }

  /** Handles one entry; true when it was handled and awaits its XACK (see `acknowledge`). */
  private async process(partition: number, id: string, fields: unknown, deliveries: number): Promise<boolean> {
    const { opts } = this.settings;
    const event = toDeliveredEvent(opts.channel, id, fields);
    if (!event || deliveries > opts.maxDeliveries) {
      await this.deadLetter(partition, id, event, deliveries);
      return false;
    }
    try {
      await this.handler(event);
    } catch (err) {
      // Left pending on purpose: it comes back through XAUTOCLAIM after claimIdleMs.
      this.counters.failed++;
      this.report(err);
      return false;
    }
    return true;
  }

  /**
   * Acknowledges the entries one read handled, in one round trip: one XACK per partition with all
   * its ids. An XACK per entry was a socket write per message, most of the consumer's CPU. Should
   * the process die first, the entries come back through XAUTOCLAIM and are handled again, which
   * handlers tolerate (they do so for any redelivery).
   */
  private async acknowledge(handled: HandledEntry[]): Promise<void> {
    if (handled.length === 0) return;
    const { opts, keys, timeoutMs } = this.settings;
    const idsByPartition = new Map<number, string[]>();
    for (const { partition, id } of handled) {
      const ids = idsByPartition.get(partition);
      if (ids) ids.push(id);
      else idsByPartition.set(partition, [id]);
    }
    const pipeline = this.conn.pipeline();
    for (const [partition, ids] of idsByPartition) pipeline.xack(keys.stream(opts.channel, partition), opts.group, ...ids);
    const results = await withDeadline(this.conn, pipeline.exec(), timeoutMs);
    const failure = results?.find(([err]) => err)?.[0];
    if (!results || failure) throw failure ?? new Error('acknowledgement pipeline aborted');
    this.counters.acked += handled.length;
  }

  /** Copies the entry to the partition's dead letters and acknowledges it, atomically (same slot). */
  private async deadLetter(partition: number, id: string, event: DeliveredEvent | null, deliveries: number): Promise<void> {
    const { opts, keys, timeoutMs, deadLetterMaxLength } = this.settings;
    const fields = [
      ...eventFields(event?.scopeKey ?? '', event?.seq ?? 0, event?.data ?? ''),
      'entryId', id, 'group', opts.group, 'consumer', opts.consumer,
      'deliveries', String(deliveries), 'deadLetteredAt', String(Date.now()),
    ];
    const tx = this.conn
      .multi()
      .xadd(keys.dead(opts.channel, partition), 'MAXLEN', '~', deadLetterMaxLength, '*', ...fields)
      .xack(keys.stream(opts.channel, partition), opts.group, id);
    const results = await withDeadline(this.conn, tx.exec(), timeoutMs);
    const failure = results?.find(([err]) => err)?.[0];
    if (!results || failure) throw failure ?? new Error('dead-letter transaction aborted');
    this.counters.deadLettered++;
  }

  private report(err: unknown): void {
    this.settings.opts.onError?.(err instanceof Error ? err : new Error(String(err)));
  }
}
