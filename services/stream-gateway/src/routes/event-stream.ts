import type { IncomingMessage } from 'node:http';
import Negotiator from 'negotiator';
import { AppError } from '@chat/contracts';
import type { RequestScope } from '@chat/authz-client';

const EVENT_STREAM = ['text/event-stream'];

/** The core request for reading a room scope (the stream's periodic recheck asks it again). */
export function scopeRequest(scope: RequestScope): { repositoryId: string; branchId?: string; action: 'read' } {
  return { repositoryId: scope.repositoryId, ...(scope.branchId === null ? {} : { branchId: scope.branchId }), action: 'read' };
}

/**
 * Whether the request's `Accept` admits `text/event-stream`, decided by negotiator as express's
 * `req.accepts` decides it: no header or an empty one admits anything; otherwise the most specific
 * range that matches must have q > 0.
 */
export function acceptsEventStream(req: Pick<IncomingMessage, 'headers'>): boolean {
  if (!req.headers.accept) return true;
  return new Negotiator(req).mediaType(EVENT_STREAM) !== undefined;
}

/**
 * Streams answer only clients that accept text/event-stream (no Accept, `*\/*` and `text/*` do).
 * @throws AppError REQUEST_INVALID otherwise.
 */
export function requireEventStream(req: Pick<IncomingMessage, 'headers'>): void {
  if (!acceptsEventStream(req)) {
    throw new AppError('REQUEST_INVALID', 'This endpoint answers text/event-stream; send Accept: text/event-stream.');
  }
}
