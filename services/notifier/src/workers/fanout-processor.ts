import { AppError } from '@chat/contracts';
import type { MentionFanoutRow } from '@chat/store';
import { fanOutMessage, type FanOutDeps } from '../domain/fan-out-message.ts';
import type { NotifierMetrics } from '../metrics.ts';

export interface FanoutProcessorSettings {
  /** How long a claim keeps other workers off a row. @defaultValue 30000 */
  leaseMs: number;
  /** Failed attempts before a row is dead-lettered. @defaultValue 5 */
  maxAttempts: number;
  /** First retry delay; doubles per failed attempt, up to `maxRetryDelayMs`. @defaultValue 1000 */
  retryDelayMs: number;
  /** @defaultValue 60000 */
  maxRetryDelayMs: number;
}

export type FanoutOutcome = 'done' | 'retry' | 'failed' | 'dead';

/** Failures that are not the row's fault: the row waits for the dependency, its attempts untouched. */
const TRANSIENT_CODES = new Set(['AUTHORIZATION_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STREAM_UNAVAILABLE']);

/**
 * Runs claimed fan-out rows and settles them: deleted when done, released for later when a
 * dependency is down (never dropped), retried with backoff after an error, and dead-lettered (kept,
 * flagged, logged) after `maxAttempts` failed attempts.
 */
export class FanoutProcessor {
  constructor(
    private readonly deps: FanOutDeps,
    private readonly settings: FanoutProcessorSettings,
    private readonly metrics: NotifierMetrics,
  ) {}

  /** The backbone path: claims the message's row if nobody holds it, and runs it. Null if nothing to do. */
  async claimAndProcess(messageId: string): Promise<FanoutOutcome | null> {
    const row = await this.deps.store.mentionFanout.claim(messageId, { now: this.deps.clock(), leaseMs: this.settings.leaseMs });
    return row ? this.process(row, 'backbone') : null;
  }

  /** Runs one claimed row and settles it; throws only when the store cannot even record the outcome. */
  async process(row: MentionFanoutRow, path: 'backbone' | 'sweeper'): Promise<FanoutOutcome> {
    const log = this.deps.logger.child({ messageId: row.messageId, roomId: row.roomId, attempt: row.attempts, path });
    let outcome: FanoutOutcome;
    try {
      const result = await fanOutMessage(this.deps, row);
      await this.deps.store.mentionFanout.complete(row.messageId);
      this.metrics.notificationsWritten.inc(result.created);
      this.metrics.deniedTargets.inc(result.denied);
      if (result.created > 0) this.metrics.fanoutLatency.observe(Math.max(0, this.deps.clock().getTime() - result.message.createdAt.getTime()) / 1000);
      outcome = 'done';
    } catch (err) {
      outcome = await this.settleFailure(row, err, log);
    }
    this.metrics.fanouts.inc({ path, outcome });
    return outcome;
  }

  private async settleFailure(row: MentionFanoutRow, err: unknown, log: FanOutDeps['logger']): Promise<FanoutOutcome> {
    const now = this.deps.clock().getTime();
    const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (err instanceof AppError && TRANSIENT_CODES.has(err.code)) {
      log.warn({ code: err.code }, 'mention fan-out waits for a dependency');
      await this.deps.store.mentionFanout.release(row.messageId, { retryAt: new Date(now + this.settings.retryDelayMs), error });
      return 'retry';
    }
    const delay = Math.min(this.settings.retryDelayMs * 2 ** Math.max(0, row.attempts - 1), this.settings.maxRetryDelayMs);
    const { dead } = await this.deps.store.mentionFanout.fail(row.messageId, {
      retryAt: new Date(now + delay),
      error,
      maxAttempts: this.settings.maxAttempts,
    });
    if (dead) log.error({ err }, 'mention fan-out dead-lettered after its last attempt');
    else log.warn({ err }, 'mention fan-out failed; will retry');
    return dead ? 'dead' : 'failed';
  }
}
