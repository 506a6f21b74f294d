import type { NextFunction, Request, Response } from 'express';
import { AppError, REQUEST_ID_PATTERN } from '@chat/contracts';
import { ulid } from 'ulid';

declare module 'express-serve-static-core' {
  interface Locals {
    requestId: string;
  }
}

/**
 * Takes the client's `X-Request-Id` when well formed, else makes a ULID, and echoes it. A malformed
 * one is refused with 400 REQUEST_ID_INVALID (carrying the generated ID). When an enclosing app
 * (the all-in-one) already assigned the ID, this leaves it alone.
 */
export function requestId(req: Request, res: Response, next: NextFunction): void {
  if (typeof res.locals.requestId === 'string') {
    next();
    return;
  }
  const supplied = req.headers['x-request-id'];
  const valid = typeof supplied === 'string' && REQUEST_ID_PATTERN.test(supplied);
  res.locals.requestId = valid ? supplied : ulid();
  res.setHeader('X-Request-Id', res.locals.requestId);
  if (supplied !== undefined && !valid) {
    throw new AppError('REQUEST_ID_INVALID', 'X-Request-Id must be 1–128 characters of A–Z, a–z, 0–9, ".", "_", ":" or "-".');
  }
  next();
}
