export { Batcher, type BatcherOptions } from './batcher.ts';
export { BatchDeadlineError, BatchQueueFullError } from './batcher-errors.ts';
