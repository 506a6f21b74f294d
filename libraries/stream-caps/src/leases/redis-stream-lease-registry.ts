import { defineLua, runLua } from '../redis/lua-command.ts';
import { checkKeyPrefix } from '../redis/key-prefix.ts';
import { connectionName, settleWithin, withDeadline } from '@chat/redis-client';
import { redisHandle, releaseHandle, type RedisHandle, type RedisTargetOrClient } from '../redis/redis-handle.ts';
import { HolderLiveness } from './holder-liveness.ts';
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
  /**
   * Life of this registry's liveness key, refreshed every fifth of it: once a process is gone for
   * this long, its slots count as free to the next acquire that finds its cap full, instead of
   * waiting out `leaseMs`. @defaultValue 5000
   */
  holderTtlMs?: number;
}

/** Ids per renewal script call, so one crowded room does not make one huge script run. */
const RENEW_CHUNK = 500;

/**
 * Slices of the renewal period: every set is renewed once per period, in the slice its key hashes to,
 * so a gateway renews a tenth of its sets every tenth of the period rather than all of them at once.
 */
const RENEWAL_SLICES = 10;

/** FNV-1a over the key's UTF-16 code units: a cheap, stable spread of set keys over the slices. */
function sliceOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % RENEWAL_SLICES;
}

/** The sets a live lease holds a slot in: a room stream's principal and room sets, or an inbox stream's one set. */
type HeldSlots = readonly string[];

/**
 * The stream caps shared by every gateway through Redis. Each cap is a sorted set of lease ids
 * scored by expiry: `<prefix>:{cap:p:<principalKey>}` and `<prefix>:{cap:r:<roomKey>}` for room
 * streams, `<prefix>:{cap:i:<principalKey>}` for inbox streams. A room stream's two sets live in
 * different Cluster slots, so it asks for both slots at once, one script each, and gives back the
 * one it got if the other is refused. One timer per registry renews every live lease each
 * leaseMs/3, one script call per busy set sent side by side, so the cost per round is one call per
 * busy set, not one timer per stream. The sets are spread over ten slices of that period by their
 * key, one slice renewed per tick: thousands of sets renewed in one burst would hold Redis, and the
 * event loop that sends and reads the calls, for tens of milliseconds, and every append and delivery
 * waiting behind them would feel it.
 *
 * A process that dies without closing (SIGKILL, OOM, a lost node) stops renewing, and its slots
 * would hold their caps until they expire, `leaseMs` later. So each registry is a holder with a
 * random id: its lease ids are `<holder>.<n>`, and it keeps a liveness key alive for `holderTtlMs`
 * (holder-liveness.ts). An acquire that finds a cap full is told the holders of the slots in
 * the way, asks which liveness keys are gone (a holder seen alive is trusted for a second), and takes
 * again dropping the slots of the dead ones: the slots of a killed gateway free within `holderTtlMs`
 * of its death. The liveness keys live in slots of their own (a set's script cannot read them in
 * Redis Cluster), so the asking is separate commands, and happens only on the way to a refusal.
 * A holder cut off from Redis for longer than `holderTtlMs` while its streams go on may see its slots
 * taken; its renewals then report them lost, and the cap is exceeded by those streams until they end.
 */
export class RedisStreamLeaseRegistry implements StreamLeaseRegistry {
  private readonly settings: StreamCapSettings;
  private readonly handle: RedisHandle;
  private readonly keyPrefix: string;
  private readonly timeoutMs: number;
  private readonly onError: ((err: unknown) => void) | undefined;
  private readonly live = new Map<string, HeldSlots>();
  /** The live lease ids of every set, bucketed by the renewal slice of the set's key. */
  private readonly setsBySlice: Array<Map<string, Set<string>>> = Array.from({ length: RENEWAL_SLICES }, () => new Map());
  private readonly timer: NodeJS.Timeout;
  private tickCount = 0;
  private readonly dueSlices = new Set<number>();
  private renewing = false;
  private closed = false;
  private pendingRemovals = new Map<string, Set<string>>();
  private removalWaiters: Array<() => void> = [];
  private removalScheduled = false;
  private leaseCount = 0;
  private readonly liveness: HolderLiveness;

  constructor(options: RedisStreamLeaseRegistryOptions) {
    this.settings = streamCapSettings(options);
    this.keyPrefix = checkKeyPrefix(options.keyPrefix ?? 'chat');
    this.timeoutMs = options.timeoutMs ?? 1000;
    this.onError = options.onError;
    // Renewals go out side by side and are waited for longer than timeoutMs as a batch.
    this.handle = redisHandle(options.redis, connectionName(this.keyPrefix, 'stream-leases'), this.timeoutMs);
    defineLua(this.handle.redis, TAKE_SLOT);
    defineLua(this.handle.redis, RENEW_SLOTS);
    this.timer = setInterval(() => void this.renewDue(), Math.max(1, Math.floor(this.settings.leaseMs / 3 / RENEWAL_SLICES)));
    // Renewals alone must not keep a process alive that has nothing else to do.
    this.timer.unref();
    this.liveness = new HolderLiveness(this.handle, this.keyPrefix, options.holderTtlMs ?? 5000, this.timeoutMs, (err) => this.report(err));
  }

  /** This registry's id among the holders of slots; lease ids are `<holder>.<n>`. */
  get holder(): string {
    return this.liveness.holder;
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
    await this.liveness.ensureAnnounced();
    const id = this.nextId();
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
    await this.liveness.ensureAnnounced();
    const id = this.nextId();
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
    for (const sets of this.setsBySlice) sets.clear();
    if (held.length > 0) await this.removeQuietly(held.flatMap(([id, slots]) => slots.map((key) => ({ key, ids: [id] }))));
    await this.liveness.close().catch((err: unknown) => this.report(err));
    await releaseHandle(this.handle);
  }

  private nextId(): string {
    this.leaseCount += 1;
    return `${this.holder}.${this.leaseCount.toString(36)}`;
  }

  /** Registers slots taken in Redis as a live lease, unless the registry closed meanwhile. */
  private async hold(id: string, slots: HeldSlots): Promise<StreamLease> {
    if (this.closed) {
      await this.removeSlots(slots, id);
      throw streamLeasesUnavailable();
    }
    this.track(id, slots);
    return { id, release: () => this.release(id) };
  }

  /** Takes a slot in `key`; when the cap is full and some slots in the way belong to dead holders, takes again without them. */
  private async take(kind: StreamCapKind, key: string, id: string, cap: number): Promise<void> {
    let result: { taken: boolean; earliestExpiryMs: number; holders: string[] };
    try {
      const takeOnce = async (dead: readonly string[]) =>
        parseTake(await withDeadline(runLua(this.handle.redis, TAKE_SLOT, [key], [id, cap, this.settings.leaseMs, this.keyTtlMs(), ...dead]), this.timeoutMs));
      result = await takeOnce([]);
      if (!result.taken && result.holders.length > 0) {
        const dead = await this.liveness.deadAmong(result.holders);
        if (dead.length > 0) result = await takeOnce(dead);
      }
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
    const slots = this.untrack(id);
    if (!slots) return;
    await this.queueRemoval(slots, id);
  }

  private track(id: string, slots: HeldSlots): void {
    this.live.set(id, slots);
    for (const key of slots) {
      const sets = this.setsBySlice[sliceOf(key)]!;
      let ids = sets.get(key);
      if (!ids) sets.set(key, (ids = new Set()));
      ids.add(id);
    }
  }

  /** Stops renewing lease `id`; returns its slots, or undefined when it was not live. */
  private untrack(id: string): HeldSlots | undefined {
    const slots = this.live.get(id);
    if (!slots) return undefined;
    this.live.delete(id);
    for (const key of slots) {
      const sets = this.setsBySlice[sliceOf(key)]!;
      const ids = sets.get(key);
      ids?.delete(id);
      if (ids?.size === 0) sets.delete(key);
    }
    return slots;
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

  /**
   * One tick: the slice whose turn it is becomes due, and unless a renewal is still running, every
   * due slice is renewed now (a slice whose turn came during a slow renewal is not skipped).
   */
  private async renewDue(): Promise<void> {
    this.dueSlices.add(this.tickCount++ % RENEWAL_SLICES);
    if (this.renewing || this.live.size === 0) return;
    this.renewing = true;
    const slices = [...this.dueSlices];
    this.dueSlices.clear();
    try {
      const lost = await this.renewSlices(slices);
      for (const id of lost) {
        const slots = this.untrack(id);
        if (!slots) continue; // released while the round ran
        this.report(new StreamLeaseLostError(id));
        await this.removeSlots(slots, id);
      }
    } catch (err) {
      // The slices come round again next period; two more fit in a lease before any slot expires.
      this.report(err);
    } finally {
      this.renewing = false;
    }
  }

  /** Renews every set of `slices`, one script call per set and chunk, side by side; returns the ids whose slots were gone. */
  private async renewSlices(slices: readonly number[]): Promise<Set<string>> {
    const lost = new Set<string>();
    const calls: Array<Promise<unknown>> = [];
    for (const slice of slices) {
      for (const [key, idSet] of this.setsBySlice[slice]!) {
        const ids = [...idSet];
        for (let i = 0; i < ids.length; i += RENEW_CHUNK) {
          const renewal = runLua(this.handle.redis, RENEW_SLOTS, [key], [this.settings.leaseMs, this.keyTtlMs(), ...ids.slice(i, i + RENEW_CHUNK)]);
          calls.push(renewal.then((reply) => parseLost(reply).forEach((id) => lost.add(id))));
        }
      }
    }
    if (calls.length === 0) return lost;
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
