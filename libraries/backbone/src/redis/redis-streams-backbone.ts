import { AppError } from '@chat/contracts';
import { connectionName, openRedisClient, withDeadlineOrReconnect, type RedisClient, type RedisConnectionProfile, type RedisTarget } from '@chat/redis-client';
import { CHANNELS, RETENTION_DEFAULTS, resolveConsumeOptions } from '../backbone.ts';
import type { Backbone, BackboneEvent, Channel, ConsumeOptions, Consumer, DeadLetter, DeliveredEvent, RetentionOptions, Subscription, TrimReport } from '../backbone.ts';
import { listDeadLetters } from './dead-letters.ts';
import { execPerSlot } from './exec-per-slot.ts';
import { ensureGroup, groupStats, RedisGroupConsumer, sharedConcurrency } from './redis-group-consumer.ts';
import { lastEntryIds, RedisLiveReader } from './redis-subscription.ts';
import { eventFields } from './stream-entry.ts';
import { StreamKeys } from './stream-keys.ts';
import { trimChannel } from './stream-trimmer.ts';

export interface RedisStreamsBackboneOptions extends RetentionOptions {
  /**
   * A `redis://` URL, ioredis options (one node, or Sentinel) or a Cluster's seed nodes. The
   * backbone opens and owns its connections.
   */
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
  private readonly main: RedisClient;
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
    this.main = this.openConnection('backbone', 'main');
  }

  async publish(events: BackboneEvent[]): Promise<void> {
    this.assertOpen();
    if (events.length === 0) return;
    this.startTrimming();
    if (events.length === 1) return this.publishOne(events[0] as BackboneEvent);
    const entries = events.map((e) => ({ key: this.keys.stream(e.channel, this.keys.partitionOf(e.scopeKey)), e }));
    // One pipeline per partition at most (one in all on a single node): Redis applies a partition's
    // XADDs in this order, and a scope lives in one partition, so per-scope order holds.
    const results = await this.guard(
      execPerSlot(this.main, entries, (x) => x.key, (pipeline, { key, e }) => pipeline.xadd(key, '*', ...eventFields(e.scopeKey, e.seq, e.data, e.traceparent))),
    );
    const failure = results.find(([err]) => err)?.[0];
    if (failure) throw streamUnavailable(failure);
  }

  /**
   * One event, the usual batch when appends are spread over many rooms: a plain XADD, since a
   * pipeline of one command costs ~35 µs more CPU and carries nothing a single command does not.
   */
  private async publishOne(e: BackboneEvent): Promise<void> {
    const key = this.keys.stream(e.channel, this.keys.partitionOf(e.scopeKey));
    await this.guard(this.main.xadd(key, '*', ...eventFields(e.scopeKey, e.seq, e.data, e.traceparent)));
  }

  async subscribe(channel: Channel, onEvent: (e: DeliveredEvent) => void, onError?: (err: Error) => void): Promise<Subscription> {
    this.assertOpen();
    const streamKeys = this.keys.streams(channel);
    const startIds = await this.guard(lastEntryIds(this.main, streamKeys));
    const readers = this.readerPlan().map((partitions) => {
      const role = this.main.isCluster ? `sub:${channel}:${partitions[0]}` : `sub:${channel}`;
      return new RedisLiveReader(
        this.openConnection('backbone-blocking', role),
        {
          channel,
          streamKeys: partitions.map((p) => streamKeys[p] as string),
          startIds: partitions.map((p) => startIds[p] ?? '0-0'),
          blockMs: this.options.subscribeBlockMs ?? 5000,
          graceMs: this.graceMs,
          count: LIVE_READ_COUNT,
        },
        onEvent,
        onError,
      );
    });
    const subscription: Subscription = {
      close: async () => {
        this.subscriptions.delete(subscription);
        await Promise.all(readers.map((r) => r.close()));
      },
    };
    this.subscriptions.add(subscription);
    return subscription;
  }

  async consume(opts: ConsumeOptions, handler: (e: DeliveredEvent) => Promise<void>): Promise<Consumer> {
    this.assertOpen();
    const resolved = resolveConsumeOptions(opts);
    await this.guard(ensureGroup(this.main, this.keys.streams(opts.channel), opts.group));
    this.startTrimming();
    const plan = this.readerPlan();
    const handle = plan.length > 1 ? sharedConcurrency(resolved.concurrency, handler) : handler;
    const members = plan.map((partitions) => {
      const role = this.main.isCluster ? `group:${opts.group}:${opts.consumer}:${partitions[0]}` : `group:${opts.group}:${opts.consumer}`;
      const member = new RedisGroupConsumer(
        this.openConnection('backbone-blocking', role),
        {
          keys: this.keys,
          partitions,
          opts: resolved,
          timeoutMs: this.timeoutMs,
          graceMs: this.graceMs,
          deadLetterMaxLength: this.options.deadLetterMaxLength ?? RETENTION_DEFAULTS.deadLetterMaxLength,
        },
        handle,
      );
      member.start();
      return member;
    });
    const consumer: Consumer = {
      stop: async () => {
        this.consumers.delete(consumer);
        await Promise.all(members.map((m) => m.stop()));
      },
      stats: async () => {
        const group = await this.guard(groupStats(this.main, this.keys.streams(opts.channel), opts.group));
        const totals = { acked: 0, reclaimed: 0, deadLettered: 0, failed: 0 };
        for (const member of members) {
          const counts = member.counts();
          for (const name of Object.keys(totals) as (keyof typeof totals)[]) totals[name] += counts[name];
        }
        return { ...group, ...totals };
      },
    };
    this.consumers.add(consumer);
    return consumer;
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
      return await withDeadlineOrReconnect(this.main, work, this.timeoutMs);
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

  /**
   * Which partitions each blocking reader covers: all on one connection on a single node (one
   * multi-key XREAD); one per reader on a Cluster, which refuses a command whose keys span slots,
   * even slots of one node. Each Cluster reader follows its partition's slot through failover and
   * resharding (ioredis handles MOVED and ASK).
   */
  private readerPlan(): number[][] {
    const all = Array.from({ length: this.keys.partitions }, (_, p) => p);
    return this.main.isCluster ? all.map((p) => [p]) : [all];
  }

  /** A connection of the backbone's own, named after its role and numbered within the process's backbone. */
  private openConnection(profile: RedisConnectionProfile, role: string): RedisClient {
    this.connectionCount++;
    const name = `${connectionName(this.keys.prefix, `backbone:${role}`)}:${this.connectionCount}`;
    return openRedisClient(this.options.redis, { profile, name, timeoutMs: this.timeoutMs });
  }
}

/** The one error every Redis failure becomes, so the HTTP layer answers 503 and never 500. */
function streamUnavailable(cause: unknown): AppError {
  return new AppError('STREAM_UNAVAILABLE', 'The event stream is unavailable.', { cause, retryAfterSeconds: 1 });
}
