import { AppError } from '@chat/contracts';
import type { AppendRateKey, AppendRateLimiter, FixedWindowOptions } from './append-rate-limiter.ts';
import { fixedWindowSettings, rateLimited, roomPart, senderPart, windowAt, type FixedWindowSettings } from './fixed-window.ts';
import { defineLua, runLua, type LuaCommand } from '../redis/lua-command.ts';
import { redisHandle, releaseHandle, withDeadline, type RedisHandle, type RedisTarget } from '../redis/redis-connection.ts';
import { checkKeyPrefix } from '../redis/key-prefix.ts';

/**
 * What happens when Redis cannot answer in time: `open` lets the append through, `closed` refuses
 * it with 503 `STORE_UNAVAILABLE`.
 */
export type RateLimitFailureMode = 'open' | 'closed';

export interface RedisFixedWindowRateLimiterOptions extends FixedWindowOptions {
  /** A `redis://` URL (the limiter opens and closes its own connection) or a connection you own. */
  redis: RedisTarget;
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
 * One atomic step per append: INCR, and a TTL to the end of the window whenever the counter has
 * none (a new counter, or one left without a TTL by anything else), so no counter lives forever.
 * Returns the count and the counter's PTTL, which is the Retry-After once the budget is spent.
 */
const HIT_WINDOW: LuaCommand = {
  name: 'chatCoordinationRateWindowHit',
  numberOfKeys: 1,
  lua: `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
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
    this.handle = redisHandle(options.redis, 'chat-append-rate-limiter', this.timeoutMs);
    defineLua(this.handle.redis, HIT_WINDOW);
  }

  /** The counter key of a budget in a window. */
  keyOf(key: AppendRateKey, windowIndex: number): string {
    return `${this.keyPrefix}:{rl:${senderPart(key)}}:${windowIndex}:${roomPart(key, this.settings.scope)}`;
  }

  async consume(key: AppendRateKey): Promise<void> {
    const nowMs = this.settings.clock();
    const window = windowAt(nowMs, this.settings.windowSeconds);
    let hit: { count: number; pttl: number };
    try {
      const reply = await withDeadline(
        runLua(this.handle.redis, HIT_WINDOW, [this.keyOf(key, window.index)], [window.remainingMs]),
        this.timeoutMs,
      );
      hit = parseHit(reply);
    } catch (err) {
      this.failed(err);
      return;
    }
    if (hit.count > this.settings.limit) throw rateLimited(hit.pttl);
  }

  /** Closes the connection if the limiter opened it. */
  async close(): Promise<void> {
    await releaseHandle(this.handle);
  }

  private failed(err: unknown): void {
    try {
      this.onFailure?.(err);
    } catch {
      // A failing log hook must not turn an open limiter into a 500.
    }
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
