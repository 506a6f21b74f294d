import type { Request } from 'express';
import { AppError } from '@chat/contracts';
import type { RequestScope } from '@chat/http-kit';

/** The core request for reading a room scope (the stream's periodic recheck asks it again). */
export function scopeRequest(scope: RequestScope): { repositoryId: string; branchId?: string; action: 'read' } {
  return { repositoryId: scope.repositoryId, ...(scope.branchId === null ? {} : { branchId: scope.branchId }), action: 'read' };
}

/** Streams answer only clients that accept text/event-stream (no Accept, `*\/*` and `text/*` do). */
export function requireEventStream(req: Request): void {
  if (req.accepts('text/event-stream') === false) {
    throw new AppError('REQUEST_INVALID', 'This endpoint answers text/event-stream; send Accept: text/event-stream.');
  }
}
