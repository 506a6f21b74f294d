export { Batcher, type BatcherOptions, type BatchRunner } from './batcher.ts';
export { BatchDeadlineError, BatchQueueFullError } from './batcher-errors.ts';
