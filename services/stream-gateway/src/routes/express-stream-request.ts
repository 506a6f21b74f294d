import type { Request, Response } from 'express';
import type { StreamRequest } from './stream-request.ts';

/** The stream request of an express request that went through the http-kit access middleware. */
export function streamRequestOf(req: Request, res: Response): StreamRequest {
  const { principal, scope, access, requestId } = res.locals;
  return { requestId, principal, scope, access, lastEventId: req.headers['last-event-id'], cursorQuery: req.query.cursor, accept: req.headers.accept };
}
