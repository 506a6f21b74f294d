import type { Request, Response } from 'express';
import type { ApiDeps } from '../deps.ts';
import { appendMessage } from '../domain/append-message.ts';

/** POST .../messages: 201 with a new message, 200 with the original on an exact retry. */
export function appendHandler(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { principal, scope, access, requestId } = res.locals;
    const result = await appendMessage(deps, {
      principal,
      scope,
      access,
      requestId,
      idempotencyKey: req.headers['idempotency-key'],
      coreAuthorization: req.headers['x-service-core-authorization'],
      body: req.body,
    });
    res.status(result.replayed ? 200 : 201).json(result.message);
  };
}
