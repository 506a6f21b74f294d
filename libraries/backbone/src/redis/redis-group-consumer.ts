import { setTimeout as sleep } from 'node:timers/promises';
import type { ConsumerStats, DeliveredEvent, ResolvedConsumeOptions } from '../backbone.ts';
import { forEachByKey } from '../concurrency.ts';
import { waitReady, withDeadlineOrReconnect, type RedisClient } from '@chat/redis-client';
import { execPerSlot } from './exec-per-slot.ts';
import { flatToRecord } from './flat-record.ts';
import { eventFields, toDeliveredEvent, type RawEntry, type RawStreamReply } from './stream-entry.ts';
import type { StreamKeys } from './stream-keys.ts';

interface GroupConsumerSettings {
  keys: StreamKeys;
  /** The partitions this member reads: all of them on a single node, one on a Cluster (no multi-slot XREADGROUP). */
  partitions: number[];
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
export async function ensureGroup(redis: RedisClient, streamKeys: string[], group: string): Promise<void> {
  const replies = await execPerSlot(redis, streamKeys, (key) => key, (pipeline, key) => pipeline.xgroup('CREATE', key, group, '0', 'MKSTREAM'));
  for (const [err] of replies) {
    if (err && !String(err.message).startsWith('BUSYGROUP')) throw err;
  }
}

/** Group-wide pending and lag over all partitions, from XINFO GROUPS. */
export async function groupStats(redis: RedisClient, streamKeys: string[], group: string): Promise<{ pending: number; lag: number | null }> {
  const replies = await execPerSlot(redis, streamKeys, (key) => key, (pipeline, key) => pipeline.xinfo('GROUPS', key));
  let pending = 0;
  let lag: number | null = 0;
  for (const [err, groups] of replies) {
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
 * One member of a consumer group: XREADGROUP over its partitions, one XACK round trip after the
 * handlers of a read, and a periodic XAUTOCLAIM pass that takes over entries idle for `claimIdleMs`
 * (their delivery counts read with XPENDING decide when an entry is dead-lettered instead of
 * handled again).
 */
export class RedisGroupConsumer {
  private stopping = false;
  private loop: Promise<void> = Promise.resolve();
  private nextClaimAt = 0;
  private readonly claimCursors: string[];
  private readonly streamKeys: string[];
  private readonly counters = { acked: 0, reclaimed: 0, deadLettered: 0, failed: 0 };

  constructor(
    private readonly conn: RedisClient,
    private readonly settings: GroupConsumerSettings,
    private readonly handler: (e: DeliveredEvent) => Promise<void>,
  ) {
    this.streamKeys = settings.partitions.map((p) => settings.keys.stream(settings.opts.channel, p));
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

  /** What this member did: acknowledged, reclaimed, dead-lettered and failed entries. */
  counts(): Omit<ConsumerStats, 'pending' | 'lag'> {
    return { ...this.counters };
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
        const reply = (await withDeadlineOrReconnect(this.conn, read, opts.blockMs + graceMs)) as RawStreamReply | null;
        backoffMs = 50;
        const batch = (reply ?? []).flatMap(([key, entries]) => entries.map(([id, fields]) => ({ partition: this.partitionOf(key), id, fields })));
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
          await withDeadlineOrReconnect(this.conn, ensureGroup(this.conn, this.streamKeys, opts.group), this.settings.timeoutMs).catch(
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
    for (let index = 0; index < this.streamKeys.length && !this.stopping; index++) {
      const key = this.streamKeys[index] as string;
      const partition = this.settings.partitions[index] as number;
      for (let round = 0; round < CLAIM_ROUNDS_PER_PASS && !this.stopping; round++) {
        const claim = this.conn.xautoclaim(key, opts.group, opts.consumer, opts.claimIdleMs, this.claimCursors[index] ?? '0-0', 'COUNT', opts.batchSize);
        const [next, entries] = (await withDeadlineOrReconnect(this.conn, claim, timeoutMs)) as [string, RawEntry[]];
        this.claimCursors[index] = next;
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
    const results = (await withDeadlineOrReconnect(this.conn, pipeline.exec(), this.settings.timeoutMs)) ?? [];
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
    const acks = [...idsByPartition].map(([partition, ids]) => ({ key: keys.stream(opts.channel, partition), ids }));
    const results = await withDeadlineOrReconnect(this.conn, execPerSlot(this.conn, acks, (a) => a.key, (pipeline, a) => pipeline.xack(a.key, opts.group, ...a.ids)), timeoutMs);
    const failure = results.find(([err]) => err)?.[0];
    if (failure) throw failure;
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
    const results = await withDeadlineOrReconnect(this.conn, tx.exec(), timeoutMs);
    const failure = results?.find(([err]) => err)?.[0];
    if (!results || failure) throw failure ?? new Error('dead-letter transaction aborted');
    this.counters.deadLettered++;
  }

  private partitionOf(key: string): number {
    return this.settings.partitions[this.streamKeys.indexOf(key)] ?? -1;
  }

  private report(err: unknown): void {
    this.settings.opts.onError?.(err instanceof Error ? err : new Error(String(err)));
  }
}

/**
 * At most `limit` handler runs at once across the members one `consume` starts: on a Cluster there
 * is a member per partition, and `concurrency` bounds the handler runs of the whole consumer.
 */
export function sharedConcurrency(limit: number, handler: (e: DeliveredEvent) => Promise<void>): (e: DeliveredEvent) => Promise<void> {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (e) => {
    if (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      await handler(e);
    } finally {
      // The permit passes straight to the next waiter, so `running` never dips under a queue.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}
