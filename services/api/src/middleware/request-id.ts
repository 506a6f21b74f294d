import type { NextFunction, Request, Response } from 'express';
import { REQUEST_ID_PATTERN } from '@chat/contracts';
import { ulid } from 'ulid';

declare module 'express-serve-static-core' {
  interface Locals {
    requestId: string;
    /** Set when the client's `X-Request-Id` was malformed; the request then fails with 400. */
    requestIdInvalid?: boolean;
  }
}

/**
 * Takes the client's `X-Request-Id` when it is well formed, else makes a ULID, and echoes it on
 * every response. A malformed one is remembered and refused by `rejectInvalidRequestId`.
 */
export function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const supplied = req.headers['x-request-id'];
  if (supplied === undefined) {
    res.locals.requestId = ulid();
  } else if (typeof supplied === 'string' && REQUEST_ID_PATTERN.test(supplied)) {
    res.locals.requestId = supplied;
  } else {
    res.locals.requestId = ulid();
    res.locals.requestIdInvalid = true;
  }
  res.setHeader('X-Request-Id', res.locals.requestId);
  next();
}
