import { Batcher } from '@chat/batching';
import type { PendingAppend, StepOutcome } from './message-append.types.ts';
import { roomScopeKey } from './room.repository.ts';

export interface AppendBatcherOptions {
  /** Most appends one transaction carries. @defaultValue 64 */
  maxBatch?: number;
  /** Most append transactions this process runs at once, not counting stalled ones. @defaultValue 2 */
  maxConcurrent?: number;
  /**
   * A transaction still running after this long is stalled: it stops holding its lane, so appends
   * to other rooms are not held up behind one slow statement (a long lock wait, a slow fsync).
   * @defaultValue 50
   */
  stalledAfterMs?: number;
  /** Most append transactions this process runs at once, stalled ones included. @defaultValue 4 */
  maxInFlight?: number;
  /**
   * Start a transaction only after the current event-loop turn, so that every append submitted in
   * it joins, even when no transaction is running for them to queue behind. Without it, an idle
   * batcher sends each first append alone; on PGlite, where a statement's fixed cost is several
   * appends' worth, most appends would go that way.
   * @defaultValue false
   */
  startOnNextTurn?: boolean;
}

/**
 * Coalesces concurrent appends into few transactions. Appends to a room serialize on its row lock,
 * held through the commit's fsync, and every transaction costs its own round trips and fsync; so
 * while transactions run, new appends queue here and the next transaction takes all of them, across
 * rooms (up to `maxBatch`). A room is in at most one running transaction of this process, and its
 * appends leave the queue in arrival order (the batcher's per-key rule, keyed by room). Each caller
 * gets its own outcome; a failed transaction fails every caller in it (nothing of it was committed).
 */
export class AppendBatcher extends Batcher<PendingAppend, StepOutcome> {
  constructor(commit: (items: PendingAppend[]) => Promise<StepOutcome[]>, options: AppendBatcherOptions = {}) {
    super(commit, {
      maxBatch: options.maxBatch ?? 64,
      maxConcurrent: options.maxConcurrent ?? 2,
      stalledAfterMs: options.stalledAfterMs ?? 50,
      maxInFlight: options.maxInFlight ?? 4,
      startOnNextTurn: options.startOnNextTurn ?? false,
      keyOf: (item) => roomScopeKey(item.scope),
    });
  }
}
