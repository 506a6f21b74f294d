/** One notification taken from the feed, handled or not yet. */
export interface PrefixEntry {
  readonly cursor: string;
  done: boolean;
}

/**
 * The notifications taken from a stream, in stream order, and how far from the start they are all
 * handled. Handlers of different repositories finish out of order; the checkpoint may only move
 * through a run where every notification is handled, or a crash would skip the ones left behind.
 */
export class HandledPrefix {
  private entries: PrefixEntry[] = [];
  private head = 0;
  private waiters: Array<() => void> = [];

  /** Notifications taken and not yet part of the handled prefix. */
  get size(): number {
    return this.entries.length - this.head;
  }

  add(cursor: string): PrefixEntry {
    const entry = { cursor, done: false };
    this.entries.push(entry);
    return entry;
  }

  /** Marks `entry` handled; returns the cursor the handled prefix now ends at, when it moved. */
  complete(entry: PrefixEntry): string | undefined {
    entry.done = true;
    let through: string | undefined;
    while (this.head < this.entries.length && this.entries[this.head]!.done) through = this.entries[this.head++]!.cursor;
    if (through === undefined) return undefined;
    // Drop the handled run now and then, not on every step: a slice per notification costs O(n).
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    for (const wake of this.waiters.splice(0)) wake();
    return through;
  }

  /** Resolves once the prefix has moved (or at once when `size` is below `limit`). */
  async below(limit: number, signal: AbortSignal): Promise<void> {
    while (this.size >= limit && !signal.aborted) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiters.push(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }
}
