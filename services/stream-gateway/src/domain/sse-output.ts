import type { ServerResponse } from 'node:http';

/** Bounds of what may wait in one connection's send buffer. */
export interface OutputLimits {
  /** Events written while the client is not reading. @defaultValue 1000 */
  maxEvents: number;
  /** Bytes buffered for the client (Node's buffer and the socket's). @defaultValue 1048576 */
  maxBytes: number;
}

/**
 * The write side of one SSE response. Writes go straight to the response; while the client is not
 * keeping up, frames are counted, and once either bound is passed `write` reports an overflow so
 * the session can close the stream rather than buffer without end.
 */
export class SseOutput {
  private backlogEvents = 0;
  private drainWaiters: Array<() => void> = [];
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: OutputLimits,
  ) {
    res.on('drain', this.onDrain);
  }

  /** True while the response buffer is above its high-water mark. */
  get backedUp(): boolean {
    return this.res.writableNeedDrain;
  }

  /** Writes one frame; false when the backlog now exceeds the limits (the caller closes). */
  write(frame: string | Buffer): boolean {
    if (this.ended) return true;
    // The hot path: the write fit under the high-water mark and nothing waits for a drain.
    if (this.res.write(frame) && this.backlogEvents === 0) return true;
    this.backlogEvents += 1;
    return this.backlogEvents <= this.limits.maxEvents && this.res.writableLength <= this.limits.maxBytes;
  }

  /** Resolves once the client has taken what was buffered (or at once when nothing waits, or when ended). */
  whenWritable(): Promise<void> {
    if (this.ended || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Ends the response after `finalFrame` (if any) and releases every waiter. */
  end(finalFrame?: string): void {
    if (this.ended) return;
    this.ended = true;
    this.res.off('drain', this.onDrain);
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end(finalFrame);
    this.releaseWaiters();
  }

  /** Drops the connection without a clean end (an overflowing client gets nothing more). */
  destroy(): void {
    if (this.ended) return;
    this.ended = true;
    this.res.off('drain', this.onDrain);
    this.res.destroy();
    this.releaseWaiters();
  }

  private readonly onDrain = (): void => {
    this.backlogEvents = 0;
    this.releaseWaiters();
  };

  private releaseWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
