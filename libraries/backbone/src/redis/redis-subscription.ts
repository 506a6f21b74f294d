import { setTimeout as sleep } from 'node:timers/promises';
import type { Channel, DeliveredEvent, Subscription } from '../backbone.ts';
import { compareEntryIds } from '../entry-id.ts';
import { waitReady, withDeadlineOrReconnect, type RedisClient } from '@chat/redis-client';
import { execPerSlot } from './exec-per-slot.ts';
import { toDeliveredEvent, type RawStreamReply } from './stream-entry.ts';

interface LiveReaderSettings {
  channel: Channel;
  /** Every partition's stream key, in partition order. */
  streamKeys: string[];
  /** Where reading starts per partition (the last ids at subscribe time). */
  startIds: string[];
  blockMs: number;
  /** Extra wait on top of `blockMs` before a silent read counts as a dead connection. */
  graceMs: number;
  /** Entries per partition per read. */
  count: number;
}

/**
 * Last entry id of each stream ('0-0' when empty or missing): the subscription's starting point.
 * Taken before the subscription resolves, so anything published afterwards has a larger id and
 * is read, however late the first blocking read starts.
 */
export async function lastEntryIds(redis: RedisClient, streamKeys: string[]): Promise<string[]> {
  const results = await execPerSlot(redis, streamKeys, (key) => key, (pipeline, key) => pipeline.xrevrange(key, '+', '-', 'COUNT', 1));
  return streamKeys.map((_, i) => {
    const [err, entries] = results[i] ?? [new Error('missing reply'), null];
    if (err) throw err;
    const first = (entries as [string, unknown][])[0];
    return first ? first[0] : '0-0';
  });
}

/**
 * One dedicated blocking connection reading its partitions of a channel with XREAD, the caller
 * demuxing: every partition on a single node; one partition on a Cluster, which refuses a command
 * whose keys span slots even when one node serves them all. On connection loss it reports once per outage and resumes from the last ids it saw.
 */
export class RedisLiveReader implements Subscription {
  private closed = false;
  private readonly ids: string[];
  private readonly loop: Promise<void>;

  constructor(
    private readonly conn: RedisClient,
    private readonly settings: LiveReaderSettings,
    private readonly onEvent: (e: DeliveredEvent) => void,
    private readonly onError?: (err: Error) => void,
  ) {
    this.ids = [...settings.startIds];
    this.loop = this.run();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Dropping the socket ends a blocked XREAD now instead of after blockMs.
    this.conn.disconnect();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { blockMs, graceMs, count, streamKeys } = this.settings;
    let broken = false;
    let backoffMs = 50;
    while (!this.closed) {
      try {
        await waitReady(this.conn, blockMs + graceMs);
        if (broken) await this.rewindResetStreams();
        const read = this.conn.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', ...streamKeys, ...this.ids);
        const reply = (await withDeadlineOrReconnect(this.conn, read, blockMs + graceMs)) as RawStreamReply | null;
        broken = false;
        backoffMs = 50;
        if (reply) this.deliver(reply);
      } catch (err) {
        if (this.closed) break;
        if (!broken) {
          broken = true;
          this.report(err);
        }
        await sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, 2000);
      }
    }
  }

  /**
   * After an outage Redis may come back empty or restored from an older snapshot, with ids below
   * the ones seen before (a restart on a host whose clock is behind). Reading on from the old ids
   * would then skip every new entry, so such partitions are read again from the start.
   */
  private async rewindResetStreams(): Promise<void> {
    const { streamKeys, blockMs, graceMs } = this.settings;
    const current = await withDeadlineOrReconnect(this.conn, lastEntryIds(this.conn, streamKeys), blockMs + graceMs);
    for (const [partition, lastId] of current.entries()) {
      const seen = this.ids[partition] ?? '0-0';
      if (compareEntryIds(lastId, seen) < 0) this.ids[partition] = '0-0';
    }
  }

  private deliver(reply: RawStreamReply): void {
    for (const [key, entries] of reply) {
      const partition = this.settings.streamKeys.indexOf(key);
      if (partition < 0) continue;
      for (const [entryId, fields] of entries) {
        if (this.closed) return;
        this.ids[partition] = entryId;
        const event = toDeliveredEvent(this.settings.channel, entryId, fields);
        if (!event) continue;
        try {
          this.onEvent(event);
        } catch (err) {
          // A throwing listener must not stall the feed for the other rooms it carries.
          this.report(err);
        }
      }
    }
  }

  private report(err: unknown): void {
    this.onError?.(err instanceof Error ? err : new Error(String(err)));
  }
}
