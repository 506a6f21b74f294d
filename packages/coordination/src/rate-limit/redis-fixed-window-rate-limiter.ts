import { AppError } from '@chat/contracts';
import { UNCOUNTED_UNIT, type AppendRateKey, type AppendRateLimiter, type FixedWindowOptions, type RateUnit } from './append-rate-limiter.ts';
import { fixedWindowSettings, rateLimited, roomPart, senderPart, windowAt, type FixedWindowSettings } from './fixed-window.ts';
import { defineLua, runLua, type LuaCommand } from '../redis/lua-command.ts';
import { withDeadline } from '@chat/redis-client';
import { connectionName, redisHandle, releaseHandle, type RedisHandle, type RedisTargetOrClient } from '../redis/redis-connection.ts';
import { checkKeyPrefix } from '../redis/key-prefix.ts';

/**
 * What happens when Redis cannot answer in time: `open` lets the append through, `closed` refuses
 * it with 503 `STORE_UNAVAILABLE`.
 */
export type RateLimitFailureMode = 'open' | 'closed';

export interface RedisFixedWindowRateLimiterOptions extends FixedWindowOptions {
  /**
   * A `redis://` URL, ioredis options (one node or Sentinel) or a Cluster's seed nodes (the limiter
   * opens and closes its own connection), or a connection you own.
   */
  redis: RedisTargetOrClient;
  /**
   * First part of every key; must not contain `{` or `}`, which would move the Cluster hash tag.
   * @defaultValue 'chat'
   */
  keyPrefix?: string;
  /**
   * Open by default: PostgreSQL is the record and Redis only carries fan-out, so appends must not
   * stop because Redis is down; the limit is abuse protection, not a correctness rule. Choose
   * `closed` where abuse is the greater risk than an outage of appends.
   * @defaultValue 'open'
   */
  failureMode?: RateLimitFailureMode;
  /**
   * The longest a `consume` waits for Redis before the failure mode decides.
   * @defaultValue 250
   */
  timeoutMs?: number;
  /** Told about every Redis failure, in both modes: the place for a log line and a metric. */
  onFailure?: (err: unknown) => void;
}

/**
 * One atomic step per append: INCR while the budget (ARGV[2]) has room, and a TTL to the end of the
 * window whenever the counter has none (a new counter, or one left without a TTL by anything else),
 * so no counter lives forever. A refused append is not counted, so the counter is the units held,
 * and a refunded unit is free again even after refusals. Returns the count this append would make
 * (above the budget when refused) and the counter's PTTL, which is the Retry-After once the budget
 * is spent.
 */
const HIT_WINDOW: LuaCommand = {
  name: 'chatCoordinationRateWindowHitV2',
  numberOfKeys: 1,
  lua: `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count < tonumber(ARGV[2]) then
  count = redis.call('INCR', KEYS[1])
else
  count = count + 1
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`,
};

/**
 * Gives a unit back: DECR while the window's counter still exists (it expires with its window, and
 * DECR keeps the TTL), so a refund never creates a counter or lands in another window. Only units
 * that were let through are refunded, so the counter was at least 1 when the unit was taken.
 */
const REFUND_UNIT: LuaCommand = {
  name: 'chatCoordinationRateWindowRefund',
  numberOfKeys: 1,
  lua: `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then
  return redis.call('DECR', KEYS[1])
end
return 0
`,
};

/**
 * The append fixed window shared by every API instance through Redis. Key layout:
 * `<prefix>:{rl:<senderKind>:<senderId>}:<window index>:<room or *>`; the hash tag keeps one
 * sender's counters in one Cluster slot. Windows start at multiples of `windowSeconds` since the
 * epoch by the instance's clock; each counter expires when its window ends.
 */
export class RedisFixedWindowRateLimiter implements AppendRateLimiter {
  private readonly settings: FixedWindowSettings;
  private readonly handle: RedisHandle;
  private readonly keyPrefix: string;
  private readonly failureMode: RateLimitFailureMode;
  private readonly timeoutMs: number;
  private readonly onFailure: ((err: unknown) => void) | undefined;

  constructor(options: RedisFixedWindowRateLimiterOptions) {
    this.settings = fixedWindowSettings(options);
    this.keyPrefix = checkKeyPrefix(options.keyPrefix ?? 'chat');
    this.failureMode = options.failureMode ?? 'open';
    this.timeoutMs = options.timeoutMs ?? 250;
    this.onFailure = options.onFailure;
    // One command per request, each raced against timeoutMs from the moment it is issued.
    this.handle = redisHandle(options.redis, connectionName(this.keyPrefix, 'append-rate-limiter'), this.timeoutMs, { perCommandTimeout: false, autoPipelining: false });
    defineLua(this.handle.redis, HIT_WINDOW);
    defineLua(this.handle.redis, REFUND_UNIT);
  }

  /** The counter key of a budget in a window. */
  keyOf(key: AppendRateKey, windowIndex: number): string {
    return `${this.keyPrefix}:{rl:${senderPart(key)}}:${windowIndex}:${roomPart(key, this.settings.scope)}`;
  }

  async consume(key: AppendRateKey): Promise<RateUnit> {
    const nowMs = this.settings.clock();
    const window = windowAt(nowMs, this.settings.windowSeconds);
    const counter = this.keyOf(key, window.index);
    let hit: { count: number; pttl: number };
    try {
      const reply = await withDeadline(runLua(this.handle.redis, HIT_WINDOW, [counter], [window.remainingMs, this.settings.limit]), this.timeoutMs);
      hit = parseHit(reply);
    } catch (err) {
      this.failed(err);
      return UNCOUNTED_UNIT;
    }
    if (hit.count > this.settings.limit) throw rateLimited(hit.pttl);
    let refunded = false;
    return {
      refund: async () => {
        if (refunded) return;
        refunded = true;
        try {
          await withDeadline(runLua(this.handle.redis, REFUND_UNIT, [counter], []), this.timeoutMs);
        } catch (err) {
          this.report(err);
        }
      },
    };
  }

  private report(err: unknown): void {
    try {
      this.onFailure?.(err);
    } catch {
      // A failing log hook must not turn an open limiter into a 500.
    }
  }

  /** Closes the connection if the limiter opened it. */
  async close(): Promise<void> {
    await releaseHandle(this.handle);
  }

  private failed(err: unknown): void {
    this.report(err);
    if (this.failureMode === 'closed') {
      throw new AppError('STORE_UNAVAILABLE', 'The rate limiter is unavailable; retry later.', {
        retryAfterSeconds: 1,
        cause: err,
      });
    }
  }
}

function parseHit(reply: unknown): { count: number; pttl: number } {
  if (Array.isArray(reply) && reply.length === 2) {
    const [count, pttl] = reply.map(Number) as [number, number];
    if (Number.isSafeInteger(count) && Number.isSafeInteger(pttl)) return { count, pttl };
  }
  throw new Error(`unexpected rate window reply: ${JSON.stringify(reply)}`);
}
