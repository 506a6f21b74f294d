import { AppError } from '@chat/contracts';
import { FanoutSettledError, type MentionFanoutRow } from '@chat/store';
import { runUntraced } from '@chat/tracing';
import { prepareFanout, writeFanoutRun, type FanoutDeps, type FanoutResult, type PreparedFanout } from '../domain/fanout-message.ts';
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
 * Rows of a room taken in one run: prepared together (messages read, core asked, side by side) and
 * written in one transaction. A busy room's backlog then costs one commit per run, not per message.
 */
const RUN_LENGTH = 16;

/** Outcomes after which the room's next row may run (the row is gone or dead-lettered). */
const ROOM_MOVES_ON = new Set<FanoutOutcome>(['done', 'dead']);

/** Failures that are not the row's fault: the row waits for the dependency, its attempts untouched. */
const TRANSIENT_CODES = new Set(['AUTHORIZATION_UNAVAILABLE', 'STORE_UNAVAILABLE', 'STREAM_UNAVAILABLE']);

const isTransient = (err: unknown) => (err instanceof AppError && TRANSIENT_CODES.has(err.code)) || err instanceof FanoutSettledError;

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
   * it (with the rows behind it), then drains the rest of its room in the background. Null if nothing to do. With `roomId`
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
    const { outcome, lastSettledSeq } = await this.processHead(row, 'backbone');
    if (ROOM_MOVES_ON.has(outcome) && !this.stopping) this.startDrain(row.roomId, lastSettledSeq);
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
   * Runs one claimed row (with the rows behind it), then the rest of its room, a run at a time, while
   * `more()` holds. Returns the first row's outcome.
   */
  async processRoom(row: MentionFanoutRow, path: 'backbone' | 'sweeper', more: () => boolean): Promise<FanoutOutcome> {
    const { outcome, lastSettledSeq } = await this.processHead(row, path);
    if (ROOM_MOVES_ON.has(outcome) && more()) await this.drainRoom(row.roomId, lastSettledSeq, path, more);
    return outcome;
  }

  /** Runs a claimed head with the pending rows of its room behind it. */
  private async processHead(head: MentionFanoutRow, path: 'backbone' | 'sweeper'): Promise<{ outcome: FanoutOutcome; lastSettledSeq: number }> {
    // Without the rows behind (the store failed to list them), the head runs alone.
    const behind = await this.deps.store.mentionFanout.listPending(head.roomId, head.seq, RUN_LENGTH - 1).catch(() => []);
    return this.processRun([head, ...behind], path);
  }

  /**
   * Claims the room's head and runs it with the rows behind it, a run at a time, until the room has
   * no free head, a run stops the room, or `more()` fails. The head's claim holds the whole run: no
   * other worker can claim a row behind a pending head.
   */
  private async drainRoom(roomId: string, afterSeq: number, path: 'backbone' | 'sweeper', more: () => boolean, state?: { dirty: boolean }): Promise<void> {
    try {
      for (let lastSeq = afterSeq; more(); ) {
        if (state) state.dirty = false;
        const ahead = await this.deps.store.mentionFanout.listPending(roomId, lastSeq, RUN_LENGTH);
        if (ahead.length === 0) {
          if (state?.dirty) continue;
          return;
        }
        const head = await this.deps.store.mentionFanout.claimNext(roomId, { now: this.deps.clock(), leaseMs: this.settings.leaseMs });
        // The head is held by another worker (which drains the room) or waits for its retry (the sweeper's).
        if (!head) return;
        // A head other than the one expected (a requeued dead row, say) runs alone.
        const run = head.messageId === ahead[0]!.messageId ? [head, ...ahead.slice(1)] : [head];
        const { outcome, lastSettledSeq } = await this.processRun(run, path);
        if (!ROOM_MOVES_ON.has(outcome)) return;
        lastSeq = Math.max(lastSeq, lastSettledSeq);
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
   * Runs a claimed head and the pending rows behind it (consecutive, in seq order), prepared side
   * by side. The rows whose preparation succeeded, from the head on, are written in one transaction;
   * a row whose preparation failed ends the run there and becomes the room's next head, where its
   * failure is settled. A run whose write fails is tried again with its head alone, so a failure is
   * always charged to the row that causes it. Returns the head's outcome and the last row settled.
   */
  private async processRun(run: MentionFanoutRow[], path: 'backbone' | 'sweeper'): Promise<{ outcome: FanoutOutcome; lastSettledSeq: number }> {
    const head = run[0]!;
    const preparations = run.map((row) => this.prepareQuietly(row));
    const ready: PreparedFanout[] = [];
    try {
      ready.push(await preparations[0]!);
    } catch (err) {
      return { outcome: await this.settle(head, path, err), lastSettledSeq: head.seq };
    }
    for (const preparation of preparations.slice(1)) {
      const prepared = await preparation.catch(() => undefined);
      if (!prepared) break;
      ready.push(prepared);
    }
    let results: FanoutResult[];
    try {
      results = await writeFanoutRun(this.deps, ready);
    } catch (err) {
      if (ready.length === 1 || !(err instanceof Error) || isTransient(err)) return { outcome: await this.settle(head, path, err), lastSettledSeq: head.seq };
      try {
        results = await writeFanoutRun(this.deps, ready.slice(0, 1));
      } catch (alone) {
        return { outcome: await this.settle(head, path, alone), lastSettledSeq: head.seq };
      }
    }
    const now = this.deps.clock().getTime();
    for (const result of results) {
      this.metrics.notificationsWritten.inc(result.created);
      this.metrics.deniedTargets.inc(result.denied);
      if (result.created > 0) this.metrics.fanoutLatency.observe(Math.max(0, now - result.message.createdAt.getTime()) / 1000);
      this.metrics.fanouts.inc({ path, outcome: 'done' });
    }
    return { outcome: 'done', lastSettledSeq: results[results.length - 1]!.message.seq };
  }

  /** Settles a head whose run failed, and counts it; throws only when the store cannot record it. */
  private async settle(row: MentionFanoutRow, path: 'backbone' | 'sweeper', err: unknown): Promise<FanoutOutcome> {
    const log = this.deps.logger.child({ messageId: row.messageId, roomId: row.roomId, attempt: row.attempts, path });
    const outcome = await this.settleFailure(row, err, log);
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
