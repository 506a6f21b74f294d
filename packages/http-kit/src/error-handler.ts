import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '@chat/observability';
import { writeError } from './plain-route.ts';
import './locals.ts';

/** The express error middleware: every error body is written by {@link writeError}. */
export function errorHandler(logger: Logger) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    writeError(logger, req, res as Response & { locals: Record<string, unknown> }, err);
  };
}
