import express, { type NextFunction, type Request, type Response } from 'express';
import { AppError } from '@chat/contracts';

/**
 * JSON bodies only, strictly parsed and size-bounded. A POST with any other content type is refused
 * with 400 (the spec lists no 415 for these operations).
 */
export function jsonBody(limitBytes: number) {
  const parse = express.json({ limit: limitBytes, strict: true, type: () => true });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!req.is('application/json')) {
      throw new AppError('REQUEST_INVALID', 'The request body must be application/json.');
    }
    parse(req, res, next);
  };
}
