/** A batcher refused an item because `maxQueued` items already wait for a lane. */
export class BatchQueueFullError extends Error {
  constructor(readonly maxQueued: number) {
    super(`${maxQueued} items already wait; this one was refused`);
    this.name = 'BatchQueueFullError';
  }
}

/** An item was not answered within the batcher's `deadlineMs` of being submitted. */
export class BatchDeadlineError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`not answered within ${deadlineMs} ms`);
    this.name = 'BatchDeadlineError';
  }
}
