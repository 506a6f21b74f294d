import type { IncomingHttpHeaders } from 'node:http';
import type { Request, Response } from 'express';
import { AppError, type MessageResponse } from '@chat/contracts';
import type { ApiDeps } from '../deps.ts';
import { appendMessage } from '../domain/append-message.ts';

/** What an append request carries once the access steps ran and its body was read. */
export interface AppendRequest {
  locals: Pick<Response['locals'], 'principal' | 'scope' | 'access' | 'requestId'>;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** POST .../messages: 201 with a new message, 200 with the original on an exact retry. */
export async function handleAppend(deps: ApiDeps, request: AppendRequest): Promise<{ status: 200 | 201; message: MessageResponse }> {
  const { principal, scope, access, requestId } = request.locals;
  let result;
  try {
    result = await appendMessage(deps, {
      principal,
      scope,
      access,
      requestId,
      idempotencyKey: request.headers['idempotency-key'],
      coreAuthorization: request.headers['x-service-core-authorization'],
      body: request.body,
    });
  } catch (err) {
    deps.metrics.appends.inc({ outcome: err instanceof AppError && err.code === 'RATE_LIMITED' ? 'rate_limited' : 'rejected' });
    throw err;
  }
  deps.metrics.appends.inc({ outcome: result.replayed ? 'replayed' : 'created' });
  return { status: result.replayed ? 200 : 201, message: result.message };
}

/** The express route's handler (see also `append-listener.ts`, which serves plain requests without express). */
export function appendHandler(deps: ApiDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const { status, message } = await handleAppend(deps, { locals: res.locals, headers: req.headers, body: req.body });
    res.status(status).json(message);
  };
}
