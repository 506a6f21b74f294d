import { randomBytes } from 'node:crypto';
import { withDeadline } from '@chat/redis-client';
import type { RedisHandle } from '../redis/redis-handle.ts';
import { streamLeasesUnavailable } from './stream-lease-registry.ts';

/** How long a holder found alive is taken to be alive without asking Redis again. */
const HOLDER_ALIVE_CACHE_MS = 1000;

/** Holders remembered alive at most; beyond it the memory starts over (each is asked again). */
const MAX_REMEMBERED_HOLDERS = 10_000;

/**
 * Whether the holders of stream slots are alive. Each lease registry is a holder with a random id
 * and keeps its liveness key `<prefix>:{cap:h:<holder>}` alive for `ttlMs`, refreshed every fifth of
 * it: one SET per process, whatever it holds. A holder whose key is gone died without closing
 * (SIGKILL, OOM, a lost node), and its slots may be taken without waiting out their leases.
 */
export class HolderLiveness {
  /** This process's id among the holders. */
  readonly holder = randomBytes(9).toString('base64url');
  private readonly timer: NodeJS.Timeout;
  private announced: Promise<void> | undefined;
  /** Other holders found alive, until when they are taken to be. */
  private readonly aliveUntil = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly handle: RedisHandle,
    private readonly keyPrefix: string,
    private readonly ttlMs: number,
    private readonly timeoutMs: number,
    report: (err: unknown) => void,
  ) {
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 500) throw new RangeError(`holderTtlMs must be an integer of at least 500, got ${ttlMs}`);
    this.timer = setInterval(() => void this.announce().catch(report), Math.floor(ttlMs / 5));
    // Refreshing alone must not keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  /** The key whose presence says `holder` is alive. */
  keyOf(holder: string): string {
    return `${this.keyPrefix}:{cap:h:${holder}}`;
  }

  /** Resolves once this holder's liveness key was set: no slot is taken under a holder nobody can see alive. */
  async ensureAnnounced(): Promise<void> {
    this.announced ??= this.announce();
    try {
      await this.announced;
    } catch (err) {
      this.announced = undefined;
      throw streamLeasesUnavailable(err);
    }
  }

  /** Of `holders`, the ones whose liveness key is gone. */
  async deadAmong(holders: readonly string[]): Promise<string[]> {
    const now = Date.now();
    const unknown = holders.filter((h) => h !== this.holder && (this.aliveUntil.get(h) ?? 0) <= now);
    if (unknown.length === 0) return [];
    const exists = await withDeadline(Promise.all(unknown.map((h) => this.handle.redis.exists(this.keyOf(h)))), this.timeoutMs);
    if (this.aliveUntil.size > MAX_REMEMBERED_HOLDERS) this.aliveUntil.clear();
    const dead: string[] = [];
    unknown.forEach((h, i) => {
      if (exists[i] === 1) this.aliveUntil.set(h, now + HOLDER_ALIVE_CACHE_MS);
      else dead.push(h);
    });
    return dead;
  }

  /** Stops refreshing and deletes the key; a key that cannot be deleted now expires within `ttlMs`. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await withDeadline(this.handle.redis.del(this.keyOf(this.holder)), this.timeoutMs);
  }

  /** Sets or refreshes this holder's liveness key. */
  private async announce(): Promise<void> {
    if (this.closed) return;
    await withDeadline(this.handle.redis.set(this.keyOf(this.holder), '1', 'PX', this.ttlMs), this.timeoutMs);
  }
}
