import { AppError } from '@chat/contracts';
import { FanoutSettledError, type MentionFanoutRow } from '@chat/store';
import { runUntraced } from '@chat/tracing';
import { prepareFanout, writeFanout, type FanoutDeps, type PreparedFanout } from '../domain/fanout-message.ts';
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

/** `superseded`: the row's lease lapsed and another worker settled it; this run wrote nothing more. */
export type FanoutOutcome = 'done' | 'retry' | 'failed' | 'dead' | 'superseded';

/**
 * Rows of a room prepared ahead (message read, core asked) while the room's current row is written:
 * a room's rows are written one at a time, and this keeps core's latency out of that line.
 */
const PREPARE_AHEAD = 8;

/** Outcomes after which the room's next row may run (the row is gone or dead-lettered). */
const ROOM_MOVES_ON = new Set<FanoutOutcome>(['done', 'dead']);

/** Failures that are not the row's fault: the row waits for the dependency, its attempts untouched. */
const TRANSIENT_CODES = new Set(['AUTHORIZATION_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STREAM_UNAVAILABLE']);

/**
 * Runs claimed fanout rows and settles them: deleted when done, released for later when a
 * dependency is down (never dropped), retried with backoff after an error, and dead-lettered (kept,
 * flagged, logged) after `maxAttempts` failed attempts.
 *
 * A room's rows run one after another in seq order (see the store's `MentionFanoutRepository`):
 * whoever settles a room's head claims the room's next row and runs it, and so on until the room has
 * nothing left to run. That keeps each target's inbox in message order within a room; rows whose
 * backbone event found an earlier row still pending are reached this way, not through their event.
 */
export class FanoutProcessor {
  private stopping = false;
  /** Room drains started by the backbone path, run after its event is acknowledged. */
  private readonly drains = new Set<Promise<void>>();
  /** Rooms those drains work on; `dirty` means an event for the room came in since the drain last looked. */
  private readonly draining = new Map<string, { dirty: boolean }>();

  constructor(
    private readonly deps: FanoutDeps,
    private readonly settings: FanoutProcessorSettings,
    private readonly metrics: NotifierMetrics,
  ) {}

  /**
   * The backbone path: claims the message's row if nobody holds it and it is its room's head, runs
   * it, then drains the rest of its room in the background. Null if nothing to do. With `roomId`
   * (the event's scope), a room this process is draining costs no claim: the drain is told to look
   * again before it ends.
   */
  async claimAndProcess(messageId: string, roomId?: string): Promise<FanoutOutcome | null> {
    if (this.stopping) return null;
    const local = roomId === undefined ? undefined : this.draining.get(roomId);
    if (local) {
      local.dirty = true;
      return null;
    }
    const row = await this.deps.store.mentionFanout.claim(messageId, { now: this.deps.clock(), leaseMs: this.settings.leaseMs });
    if (!row) return null;
    const outcome = await this.process(row, 'backbone');
    if (ROOM_MOVES_ON.has(outcome) && !this.stopping) this.startDrain(row.roomId, row.seq);
    return outcome;
  }

  /**
   * Drains a room in the background, not awaited by the event handler: a busy room could keep it
   * going for long, and its event is done with. stop() waits for it.
   */
  private startDrain(roomId: string, afterSeq: number): void {
    const running = this.draining.get(roomId);
    if (running) {
      running.dirty = true;
      return;
    }
    const state = { dirty: false };
    this.draining.set(roomId, state);
    // Outside the event's trace (tracing on): the drain runs other messages' fanouts.
    const drain = runUntraced(() => this.drainRoom(roomId, afterSeq, 'backbone', () => !this.stopping, state)).finally(() => this.drains.delete(drain));
    this.drains.add(drain);
  }

  /**
   * Runs one claimed row, then the rows of its room behind it, one at a time, while `more()` holds.
   * Returns the first row's outcome.
   */
  async processRoom(row: MentionFanoutRow, path: 'backbone' | 'sweeper', more: () => boolean): Promise<FanoutOutcome> {
    const outcome = await this.process(row, path);
    if (ROOM_MOVES_ON.has(outcome) && more()) await this.drainRoom(row.roomId, row.seq, path, more);
    return outcome;
  }

  /**
   * Claims and runs the room's next row until there is none free, one stops the room, or `more()`
   * fails. The next rows are prepared ahead; each is still claimed, as the room's head, before it is
   * written, and a row claimed other than the one expected is prepared on the spot.
   */
  private async drainRoom(roomId: string, afterSeq: number, path: 'backbone' | 'sweeper', more: () => boolean, state?: { dirty: boolean }): Promise<void> {
    try {
      for (let lastSeq = afterSeq; more(); ) {
        if (state) state.dirty = false;
        const ahead = await this.deps.store.mentionFanout.listPending(roomId, lastSeq, PREPARE_AHEAD);
        if (ahead.length === 0) {
          if (state?.dirty) continue;
          return;
        }
        const prepared = new Map(ahead.map((row) => [row.messageId, this.prepareQuietly(row)]));
        for (const expected of ahead) {
          if (!more()) return;
          const next = await this.deps.store.mentionFanout.claimNext(roomId, { now: this.deps.clock(), leaseMs: this.settings.leaseMs });
          // The head is held by another worker (which drains the room) or waits for its retry (the sweeper's).
          if (!next) return;
          lastSeq = next.seq;
          if (!ROOM_MOVES_ON.has(await this.process(next, path, prepared.get(next.messageId)))) return;
          if (next.messageId !== expected.messageId) break;
        }
      }
    } catch (err) {
      // The store failed: the room's next row is left to the sweeper (or to a lease that lapses).
      this.deps.logger.warn({ err, roomId }, 'fanout of a room interrupted; the sweeper takes it over');
    } finally {
      // In the same turn as the last look at `dirty`: an event arriving after this claims for itself.
      if (state) this.draining.delete(roomId);
    }
  }

  /** Starts preparing a row; a failure surfaces when (and if) the row is run, never as an unhandled rejection. */
  private prepareQuietly(row: MentionFanoutRow): Promise<PreparedFanout> {
    const prepared = prepareFanout(this.deps, row);
    prepared.catch(() => undefined);
    return prepared;
  }

  /** Starts no more room drains and waits for the ones running to settle the row in hand. */
  async stop(): Promise<void> {
    this.stopping = true;
    while (this.drains.size > 0) await Promise.all([...this.drains]);
  }

  /**
   * Runs one claimed row (with its preparation, when started ahead) and settles it; throws only when
   * the store cannot even record the outcome.
   */
  async process(row: MentionFanoutRow, path: 'backbone' | 'sweeper', prepared?: Promise<PreparedFanout>): Promise<FanoutOutcome> {
    const log = this.deps.logger.child({ messageId: row.messageId, roomId: row.roomId, attempt: row.attempts, path });
    let outcome: FanoutOutcome;
    try {
      const result = await writeFanout(this.deps, await (prepared ?? prepareFanout(this.deps, row)));
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

  private async settleFailure(row: MentionFanoutRow, err: unknown, log: FanoutDeps['logger']): Promise<FanoutOutcome> {
    if (err instanceof FanoutSettledError) {
      // Another worker took the row over after this one's lease lapsed, and finished or dead-lettered
      // it: the row is not this worker's to touch any more.
      log.info('mention fanout settled by another worker');
      return 'superseded';
    }
    const now = this.deps.clock().getTime();
    const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (err instanceof AppError && TRANSIENT_CODES.has(err.code)) {
      log.warn({ code: err.code }, 'mention fanout waits for a dependency');
      await this.deps.store.mentionFanout.release(row.messageId, { retryAt: new Date(now + this.settings.retryDelayMs), error });
      return 'retry';
    }
    const delay = Math.min(this.settings.retryDelayMs * 2 ** Math.max(0, row.attempts - 1), this.settings.maxRetryDelayMs);
    const { dead } = await this.deps.store.mentionFanout.fail(row.messageId, {
      retryAt: new Date(now + delay),
      error,
      maxAttempts: this.settings.maxAttempts,
    });
    if (dead) log.error({ err }, 'mention fanout dead-lettered after its last attempt');
    else log.warn({ err }, 'mention fanout failed; will retry');
    return dead ? 'dead' : 'failed';
  }
}
