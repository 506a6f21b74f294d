import type { Redis } from 'ioredis';
import {
  CHANNELS,
  RETENTION_DEFAULTS,
  resolveConsumeOptions,
  type Backbone,
  type BackboneEvent,
  type Channel,
  type ConsumeOptions,
  type Consumer,
  type DeadLetter,
  type DeliveredEvent,
  type RetentionOptions,
  type Subscription,
  type TrimReport,
} from '../backbone.ts';
import { listDeadLetters } from './dead-letters.ts';
import { openRedis, streamUnavailable, withDeadline, type RedisTarget } from './redis-connection.ts';
import { ensureGroup, RedisGroupConsumer } from './redis-group-consumer.ts';
import { lastEntryIds, RedisLiveReader } from './redis-subscription.ts';
import { eventFields } from './stream-entry.ts';
import { StreamKeys } from './stream-keys.ts';
import { trimChannel } from './stream-trimmer.ts';

export interface RedisStreamsBackboneOptions extends RetentionOptions {
  /** A `redis://` URL or ioredis options. The backbone opens and owns its connections. */
  redis: RedisTarget;
  /**
   * First segment of every key; tests use a random one.
   * @defaultValue 'chat'
   */
  keyPrefix?: string;
  /**
   * Partitions per channel. Changing it moves scopes between partitions: do it only with the
   * stream drained (see docs/backbone.md).
   * @defaultValue 16
   */
  partitions?: number;
  /**
   * Longest wait for a non-blocking command (publish, ping, trim, acks) before STREAM_UNAVAILABLE.
   * @defaultValue 2000
   */
  operationTimeoutMs?: number;
  /**
   * How long a live subscriber's blocking read waits per round.
   * @defaultValue 5000
   */
  subscribeBlockMs?: number;
  /**
   * Slack over a blocking read's own timeout before the connection counts as dead.
   * @defaultValue 3000
   */
  blockingGraceMs?: number;
  /**
   * Trim with `MINID ~` (whole radix-tree nodes only: cheaper, keeps slightly more).
   * @defaultValue true
   */
  approximateTrim?: boolean;
  /** Failures of the background trimming pass (the next pass retries). */
  onBackgroundError?: (err: Error) => void;
}

/** Entries per partition per live read. */
const LIVE_READ_COUNT = 512;

/** The backbone on Redis Streams: P partitioned streams per channel, Cluster-safe keys. */
export class RedisStreamsBackbone implements Backbone {
  readonly keys: StreamKeys;
  private readonly main: Redis;
  private readonly timeoutMs: number;
  private readonly retentionMs: number;
  private readonly graceMs: number;
  private readonly subscriptions = new Set<Subscription>();
  private readonly consumers = new Set<Consumer>();
  private trimTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private connectionCount = 0;

  constructor(private readonly options: RedisStreamsBackboneOptions) {
    const partitions = options.partitions ?? 16;
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > 1024) {
      throw new RangeError('partitions must be an integer from 1 to 1024');
    }
    this.keys = new StreamKeys(options.keyPrefix ?? 'chat', partitions);
    this.timeoutMs = options.operationTimeoutMs ?? 2000;
    this.retentionMs = options.retentionMs ?? RETENTION_DEFAULTS.retentionMs;
    this.graceMs = options.blockingGraceMs ?? 3000;
    this.main = openRedis(options.redis, this.connectionName('main'), this.timeoutMs, false);
  }

  async publish(events: BackboneEvent[]): Promise<void> {
    this.assertOpen();
    if (events.length === 0) return;
    this.startTrimming();
    const pipeline = this.main.pipeline();
    for (const e of events) {
      const partition = this.keys.partitionOf(e.scopeKey);
      pipeline.xadd(this.keys.stream(e.channel, partition), '*', ...eventFields(e.scopeKey, e.seq, e.data));
    }
    // One pipeline on one connection: Redis applies the XADDs in this order, so per-scope order holds.
    const results = await this.guard(pipeline.exec());
    const failure = results?.find(([err]) => err)?.[0];
    if (!results || failure) throw streamUnavailable(failure ?? new Error('pipeline aborted'));
  }

  async subscribe(channel: Channel, onEvent: (e: DeliveredEvent) => void, onError?: (err: Error) => void): Promise<Subscription> {
    this.assertOpen();
    const streamKeys = this.keys.streams(channel);
    const startIds = await this.guard(lastEntryIds(this.main, streamKeys));
    const conn = openRedis(this.options.redis, this.connectionName(`sub:${channel}`), this.timeoutMs, true);
    const reader = new RedisLiveReader(
      conn,
      { channel, streamKeys, startIds, blockMs: this.options.subscribeBlockMs ?? 5000, graceMs: this.graceMs, count: LIVE_READ_COUNT },
      onEvent,
      onError,
    );
    this.subscriptions.add(reader);
    return {
      close: async () => {
        this.subscriptions.delete(reader);
        await reader.close();
      },
    };
  }

  async consume(opts: ConsumeOptions, handler: (e: DeliveredEvent) => Promise<void>): Promise<Consumer> {
    this.assertOpen();
    const resolved = resolveConsumeOptions(opts);
    await this.guard(ensureGroup(this.main, this.keys.streams(opts.channel), opts.group));
    this.startTrimming();
    const conn = openRedis(this.options.redis, this.connectionName(`group:${opts.group}:${opts.consumer}`), this.timeoutMs, true);
    const consumer = new RedisGroupConsumer(
      conn,
      this.main,
      {
        keys: this.keys,
        opts: resolved,
        timeoutMs: this.timeoutMs,
        graceMs: this.graceMs,
        deadLetterMaxLength: this.options.deadLetterMaxLength ?? RETENTION_DEFAULTS.deadLetterMaxLength,
      },
      handler,
    );
    consumer.start();
    const handle: Consumer = {
      stop: async () => {
        this.consumers.delete(handle);
        await consumer.stop();
      },
      stats: async () => {
        try {
          return await consumer.stats();
        } catch (err) {
          throw streamUnavailable(err);
        }
      },
    };
    this.consumers.add(handle);
    return handle;
  }

  async deadLetters(channel: Channel, opts: { limit?: number } = {}): Promise<DeadLetter[]> {
    return this.guard(listDeadLetters(this.main, channel, this.keys.deads(channel), opts.limit ?? 100));
  }

  async trim(channel: Channel): Promise<TrimReport> {
    return this.guard(
      trimChannel(this.main, channel, this.keys.streams(channel), {
        retentionMs: this.retentionMs,
        approximate: this.options.approximateTrim ?? true,
      }),
    );
  }

  async ping(): Promise<void> {
    await this.guard(this.main.ping());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.trimTimer);
    await Promise.all([...this.consumers].map((c) => c.stop()));
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    this.main.disconnect();
  }

  /** Bounds every command by the operation timeout and turns any failure into STREAM_UNAVAILABLE. */
  private async guard<T>(work: Promise<T>): Promise<T> {
    try {
      return await withDeadline(this.main, work, this.timeoutMs);
    } catch (err) {
      throw streamUnavailable(err);
    }
  }

  private startTrimming(): void {
    const interval = this.options.trimIntervalMs ?? RETENTION_DEFAULTS.trimIntervalMs;
    if (this.trimTimer || interval <= 0) return;
    this.trimTimer = setInterval(() => {
      for (const channel of CHANNELS) {
        this.trim(channel).catch((err: unknown) => this.options.onBackgroundError?.(err as Error));
      }
    }, interval);
    this.trimTimer.unref();
  }

  private assertOpen(): void {
    if (this.closed) throw streamUnavailable(new Error('backbone is closed'));
  }

  private connectionName(role: string): string {
    this.connectionCount++;
    return `${this.keys.prefix}:backbone:${role}:${process.pid}:${this.connectionCount}`.replace(/\s/g, '_');
  }
}
