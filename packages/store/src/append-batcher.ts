import type { AppendOptions, AppendOutcome, NewMessage } from './message.repository.ts';
import { roomScopeKey, type RoomScope } from './room.repository.ts';

export interface PendingAppend {
  message: NewMessage;
  options: AppendOptions;
}

/** Most appends one transaction carries. */
const MAX_BATCH = 64;

/**
 * Coalesces concurrent appends to one room into one transaction. Appends to a room serialize on its
 * row lock, which is held through the commit's fsync; one transaction per message caps a room at
 * one fsync per message. While a room's transaction runs, later appends to it queue here and go
 * together in the next one, so the lock and the fsync are paid once per batch. Each caller still
 * gets its own outcome, and a failed batch fails every caller in it (nothing was committed).
 */
export class RoomAppendBatcher {
  private readonly rooms = new Map<string, Array<PendingAppend & { settle: Settle }>>();

  constructor(private readonly commit: (scope: RoomScope, items: PendingAppend[]) => Promise<AppendOutcome[]>) {}

  submit(scope: RoomScope, item: PendingAppend): Promise<AppendOutcome> {
    return new Promise<AppendOutcome>((resolve, reject) => {
      const key = roomScopeKey(scope);
      const queued = this.rooms.get(key);
      const entry = { ...item, settle: { resolve, reject } };
      if (queued) {
        queued.push(entry);
        return;
      }
      this.rooms.set(key, []);
      void this.run(key, scope, [entry]);
    });
  }

  private async run(key: string, scope: RoomScope, batch: Array<PendingAppend & { settle: Settle }>): Promise<void> {
    try {
      const outcomes = await this.commit(scope, batch);
      batch.forEach((entry, i) => entry.settle.resolve(outcomes[i]!));
    } catch (err) {
      for (const entry of batch) entry.settle.reject(err);
    }
    const queued = this.rooms.get(key) ?? [];
    if (queued.length === 0) {
      this.rooms.delete(key);
      return;
    }
    const next = queued.splice(0, MAX_BATCH);
    void this.run(key, scope, next);
  }
}

interface Settle {
  resolve(outcome: AppendOutcome): void;
  reject(err: unknown): void;
}
