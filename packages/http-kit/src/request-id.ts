import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { AppError, REQUEST_ID_PATTERN } from '@chat/contracts';
import { newUlid } from '@chat/contracts';
import './locals.ts';

/**
 * Takes the client's `X-Request-Id` when it is well formed, else makes a ULID, echoes it on the
 * response, and binds it to the request's logger (`res.locals.log`, set by the access log). A malformed one is refused with 400 REQUEST_ID_INVALID (answered under the generated ID).
 * When an enclosing app already assigned the ID (the all-in-one mounts the gateway's routes inside
 * the API's app), it is left alone.
 */
export function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  if (typeof res.locals.requestId === 'string') return next();
  const supplied = req.headers['x-request-id'];
  const valid = typeof supplied === 'string' && REQUEST_ID_PATTERN.test(supplied);
  res.locals.requestId = valid ? supplied : newUlid();
  res.setHeader('X-Request-Id', res.locals.requestId);
  if (res.locals.log) res.locals.log = res.locals.log.child({ requestId: res.locals.requestId });
  if (supplied !== undefined && !valid) {
    throw new AppError('REQUEST_ID_INVALID', 'X-Request-Id must be 1–128 characters of A–Z, a–z, 0–9, ".", "_", ":" or "-".');
  }
  next();
}

/**
 * Gives a response served outside express (a static file, say) its `X-Request-Id`: the client's
 * when well formed, else a new ULID. A malformed one is replaced rather than refused, as nothing on
 * such a route is worth a 400. Answers the ID, for the log.
 */
export function setResponseRequestId(req: IncomingMessage, res: ServerResponse): string {
  const supplied = req.headers['x-request-id'];
  const id = typeof supplied === 'string' && REQUEST_ID_PATTERN.test(supplied) ? supplied : newUlid();
  res.setHeader('X-Request-Id', id);
  return id;
}
