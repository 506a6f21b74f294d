import type { Request, Response } from 'express';
import { AppError } from '@chat/contracts';

/** Answers a known path with an unsupported method: 405 in the envelope, with `Allow`. */
export function methodNotAllowed(allow: string) {
  return (_req: Request, res: Response): void => {
    res.setHeader('Allow', allow);
    throw new AppError('REQUEST_INVALID', `This path accepts only ${allow}.`, { status: 405 });
  };
}
