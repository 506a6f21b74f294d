import { randomUUID } from 'node:crypto';
import { defineLua, runLua } from '../redis/lua-command.ts';
import { checkKeyPrefix } from '../redis/key-prefix.ts';
import { withDeadline } from '@chat/redis-client';
import { connectionName, redisHandle, releaseHandle, settleWithin, type RedisHandle, type RedisTargetOrClient } from '../redis/redis-connection.ts';
import { parseLost, parseTake, RENEW_SLOTS, TAKE_SLOT } from './redis-lease-scripts.ts';
import { StreamLeaseLostError } from './stream-lease-lost-error.ts';
import {
  streamCapReached,
  streamCapSettings,
  streamLeasesUnavailable,
  type StreamCapKind,
  type StreamCapOptions,
  type StreamCapSettings,
  type StreamLease,
  type StreamLeaseRegistry,
} from './stream-lease-registry.ts';

export interface RedisStreamLeaseRegistryOptions extends StreamCapOptions {
  /**
   * A `redis://` URL, ioredis options (one node or Sentinel) or a Cluster's seed nodes (the registry
   * opens and closes its own connection), or a connection you own (without `keyPrefix`).
   */
  redis: RedisTargetOrClient;
  /**
   * First part of every key; must not contain `{` or `}`.
   * @defaultValue 'chat'
   */
  keyPrefix?: string;
  /**
   * The longest an acquire or release waits for Redis; an acquire that runs out answers 503.
   * @defaultValue 1000
   */
  timeoutMs?: number;
  /** Told about failed renewals (retried on the next round), failed releases and lost leases ({@link StreamLeaseLostError}). */
  onError?: (err: unknown) => void;
}

/** Ids per renewal script call, so one crowded room does not make one huge script run. */
const RENEW_CHUNK = 500;

/** The sets a live lease holds a slot in: a room stream's principal and room sets, or an inbox stream's one set. */
type HeldSlots = readonly string[];

/**
 * The stream caps shared by every gateway through Redis. Each cap is a sorted set of lease ids
 * scored by expiry: `<prefix>:{cap:p:<principalKey>}` and `<prefix>:{cap:r:<roomKey>}` for room
 * streams, `<prefix>:{cap:i:<principalKey>}` for inbox streams. A room stream's two sets live in
 * different Cluster slots, so it asks for both slots at once, one script each, and gives back the
 * one it got if the other is refused. One timer per registry renews every live lease each
 * leaseMs/3, one script call per busy set sent side by side, so the cost per round is one call per
 * busy set, not one timer per stream.
 */
export class RedisStreamLeaseRegistry implements StreamLeaseRegistry {
  private readonly settings: StreamCapSettings;
  private readonly handle: RedisHandle;
  private readonly keyPrefix: string;
  private readonly timeoutMs: number;
  private readonly onError: ((err: unknown) => void) | undefined;
  private readonly live = new Map<string, HeldSlots>();
  private readonly timer: NodeJS.Timeout;
  private renewing = false;
  private closed = false;
  private pendingRemovals = new Map<string, Set<string>>();
  private removalWaiters: Array<() => void> = [];
  private removalScheduled = false;

  constructor(options: RedisStreamLeaseRegistryOptions) {
    this.settings = streamCapSettings(options);
    this.keyPrefix = checkKeyPrefix(options.keyPrefix ?? 'chat');
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.onError = options.onError;
    this.handle = redisHandle(options.redis, connectionName(this.keyPrefix, 'stream-leases'), this.timeoutMs);
    defineLua(this.handle.redis, TAKE_SLOT);
    defineLua(this.handle.redis, RENEW_SLOTS);
    this.timer = setInterval(() => void this.renewAll(), Math.max(1, Math.floor(this.settings.leaseMs / 3)));
    // Renewals alone must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  principalSetKey(principalKey: string): string {
    return `${this.keyPrefix}:{cap:p:${principalKey}}`;
  }

  roomSetKey(roomKey: string): string {
    return `${this.keyPrefix}:{cap:r:${roomKey}}`;
  }

  inboxSetKey(principalKey: string): string {
    return `${this.keyPrefix}:{cap:i:${principalKey}}`;
  }

  async acquire(input: { principalKey: string; roomKey: string }): Promise<StreamLease> {
    if (this.closed) throw streamLeasesUnavailable();
    const id = randomUUID();
    const principalSet = this.principalSetKey(input.principalKey);
    const roomSet = this.roomSetKey(input.roomKey);
    // Both slots are asked for at once (one round trip: the connection pipelines commands of one
    // turn); a refusal of either gives back the one that was taken, and the principal's refusal is
    // the one reported when both are refused, as if they had been asked in turn.
    const [principal, room] = await Promise.allSettled([
      this.take('principal', principalSet, id, this.settings.principalCap),
      this.take('room', roomSet, id, this.settings.roomCap),
    ]);
    if (principal.status === 'rejected' || room.status === 'rejected') {
      const taken = [...(principal.status === 'fulfilled' ? [principalSet] : []), ...(room.status === 'fulfilled' ? [roomSet] : [])];
      if (taken.length > 0) await this.removeSlots(taken, id);
      throw principal.status === 'rejected' ? principal.reason : (room as PromiseRejectedResult).reason;
    }
    return this.hold(id, [principalSet, roomSet]);
  }

  async acquireInbox(input: { principalKey: string }): Promise<StreamLease> {
    if (this.closed) throw streamLeasesUnavailable();
    const id = randomUUID();
    const inboxSet = this.inboxSetKey(input.principalKey);
    await this.take('inbox', inboxSet, id, this.settings.inboxPrincipalCap);
    return this.hold(id, [inboxSet]);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.flushRemovals();
    const held = [...this.live];
    this.live.clear();
    if (held.length > 0) await this.removeQuietly(held.flatMap(([id, slots]) => slots.map((key) => ({ key, ids: [id] }))));
    await releaseHandle(this.handle);
  }

  /** Registers slots taken in Redis as a live lease, unless the registry closed meanwhile. */
  private async hold(id: string, slots: HeldSlots): Promise<StreamLease> {
    if (this.closed) {
      await this.removeSlots(slots, id);
      throw streamLeasesUnavailable();
    }
    this.live.set(id, slots);
    return { id, release: () => this.release(id) };
  }

  private async take(kind: StreamCapKind, key: string, id: string, cap: number): Promise<void> {
    let result: { taken: boolean; earliestExpiryMs: number };
    try {
      const reply = await withDeadline(
        runLua(this.handle.redis, TAKE_SLOT, [key], [id, cap, this.settings.leaseMs, this.keyTtlMs()]),
        this.timeoutMs,
      );
      result = parseTake(reply);
    } catch (err) {
      throw streamLeasesUnavailable(err);
    }
    if (result.taken) return;
    // A renewed slot never reaches its expiry, so its expiry would promise a free slot that will not
    // come; only a slot that stopped renewing (its holder died) gives a sooner, truthful answer.
    const untilExpiry = Math.ceil(result.earliestExpiryMs / 1000);
    throw streamCapReached(kind, Math.min(untilExpiry, this.settings.retryAfterSeconds));
  }

  private async release(id: string): Promise<void> {
    const slots = this.live.get(id);
    if (!slots) return;
    this.live.delete(id);
    await this.queueRemoval(slots, id);
  }

  /**
   * Releases of one event-loop turn leave together: one ZREM per set, sent side by side. When a thousand
   * streams close at once that is a few commands instead of two thousand, and a busy event loop
   * that reads the reply late costs one timed-out command, not hundreds.
   */
  private queueRemoval(keys: readonly string[], id: string): Promise<void> {
    for (const key of keys) {
      let ids = this.pendingRemovals.get(key);
      if (!ids) this.pendingRemovals.set(key, (ids = new Set()));
      ids.add(id);
    }
    return new Promise((resolve) => {
      this.removalWaiters.push(resolve);
      if (this.removalScheduled) return;
      this.removalScheduled = true;
      setImmediate(() => void this.flushRemovals());
    });
  }

  private async flushRemovals(): Promise<void> {
    this.removalScheduled = false;
    const removals = this.pendingRemovals;
    const waiters = this.removalWaiters;
    this.pendingRemovals = new Map();
    this.removalWaiters = [];
    if (removals.size > 0) await this.removeQuietly([...removals].map(([key, ids]) => ({ key, ids: [...ids] })));
    for (const settle of waiters) settle();
  }

  /** Best effort: a slot that cannot be removed now is no longer renewed and frees within the lease. */
  private async removeSlots(keys: readonly string[], id: string): Promise<void> {
    await this.removeQuietly(keys.map((key) => ({ key, ids: [id] })));
  }

  /**
   * One ZREM per set, side by side rather than in one pipeline: the sets of a room stream live in
   * different Cluster slots, which one pipeline cannot span.
   */
  private async removeQuietly(removals: ReadonlyArray<{ key: string; ids: string[] }>): Promise<void> {
    try {
      const failures = await settleWithin(removals.map(({ key, ids }) => this.handle.redis.zrem(key, ...ids)), this.timeoutMs);
      for (const err of failures) this.report(err);
    } catch (err) {
      this.report(err);
    }
  }

  private async renewAll(): Promise<void> {
    if (this.renewing || this.live.size === 0) return;
    this.renewing = true;
    try {
      const lost = await this.renewRound();
      for (const id of lost) {
        const slots = this.live.get(id);
        if (!slots) continue; // released while the round ran
        this.live.delete(id);
        this.report(new StreamLeaseLostError(id));
        await this.removeSlots(slots, id);
      }
    } catch (err) {
      // The next round retries every lease; two more rounds fit in a lease before any slot expires.
      this.report(err);
    } finally {
      this.renewing = false;
    }
  }

  /** Renews every live lease, one script call per set and chunk, side by side; returns the ids whose slots were gone. */
  private async renewRound(): Promise<Set<string>> {
    const idsBySet = new Map<string, string[]>();
    for (const [id, slots] of this.live) {
      for (const key of slots) {
        const ids = idsBySet.get(key) ?? [];
        ids.push(id);
        idsBySet.set(key, ids);
      }
    }
    const lost = new Set<string>();
    const calls: Array<Promise<unknown>> = [];
    for (const [key, ids] of idsBySet) {
      for (let i = 0; i < ids.length; i += RENEW_CHUNK) {
        const renewal = runLua(this.handle.redis, RENEW_SLOTS, [key], [this.settings.leaseMs, this.keyTtlMs(), ...ids.slice(i, i + RENEW_CHUNK)]);
        calls.push(renewal.then((reply) => parseLost(reply).forEach((id) => lost.add(id))));
      }
    }
    const failures = await settleWithin(calls, Math.max(this.timeoutMs, Math.floor(this.settings.leaseMs / 3)));
    for (const err of failures) this.report(err);
    return lost;
  }

  /** A set outlives its newest slot by one lease, then vanishes: no key without a TTL. */
  private keyTtlMs(): number {
    return this.settings.leaseMs * 2;
  }

  private report(err: unknown): void {
    try {
      this.onError?.(err);
    } catch {
      // A failing log hook must not stop renewals.
    }
  }
}
