import type { Request, Response } from 'express';
import { AppError } from '@chat/contracts';
import type { ApiDeps } from '../deps.ts';
import { appendMessage } from '../domain/append-message.ts';

/** POST .../messages: 201 with a new message, 200 with the original on an exact retry. */
export function appendHandler(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { principal, scope, access, requestId } = res.locals;
    let result;
    try {
      result = await appendMessage(deps, {
        principal,
        scope,
        access,
        requestId,
        idempotencyKey: req.headers['idempotency-key'],
        coreAuthorization: req.headers['x-service-core-authorization'],
        body: req.body,
      });
    } catch (err) {
      deps.metrics.appends.inc({ outcome: err instanceof AppError && err.code === 'RATE_LIMITED' ? 'rate_limited' : 'rejected' });
      throw err;
    }
    deps.metrics.appends.inc({ outcome: result.replayed ? 'replayed' : 'created' });
    res.status(result.replayed ? 200 : 201).json(result.message);
  };
}
