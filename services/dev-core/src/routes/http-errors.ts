import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeJson, type PublicRoute } from '@chat/http-kit';
import type { Logger } from 'pino';

type Handle = PublicRoute['handle'];

/**
 * A refusal in core's own error format (`{ error: { code, message, ...extra } }`, deliberately unlike
 * chat's envelope). Handlers throw it; {@link answeringErrors} writes it.
 */
export class CoreRefusalError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** More members of `error`: zod's `issues`, OAuth's `parameter`. */
    readonly extra: object = {},
  ) {
    super(message);
    this.name = 'CoreRefusalError';
  }
}

/** A body or query that fails its schema: 400 `request_invalid`, "<what> invalid", with zod's `issues`. */
export function invalid(what: string, error: { issues: unknown }): CoreRefusalError {
  return new CoreRefusalError(400, 'request_invalid', `${what} invalid`, { issues: error.issues });
}

/** Writes dev-core's error body (JSON, `Cache-Control: no-store`). */
export function sendError(res: ServerResponse, status: number, code: string, message: string, extra: object = {}): void {
  writeJson(res, status, { error: { code, message, ...extra } });
}

/**
 * `handle`, with its refusals written in core's format and anything else logged and answered 500
 * `internal`, naming nothing. Once the response has started, an error can only end the connection.
 */
export function answeringErrors(logger: Logger, handle: Handle): Handle {
  const answerError = (res: ServerResponse, err: unknown): void => {
    if (!(err instanceof CoreRefusalError)) logger.error({ err }, 'unexpected error');
    if (res.headersSent) res.destroy();
    else if (err instanceof CoreRefusalError) sendError(res, err.status, err.code, err.message, err.extra);
    else sendError(res, 500, 'internal', 'internal error');
  };
  // Not an async function: a handler that answers at once costs no extra promise.
  return (request) => {
    try {
      const answer = handle(request);
      return answer instanceof Promise ? answer.catch((err: unknown) => answerError(request.res, err)) : answer;
    } catch (err) {
      return answerError(request.res, err);
    }
  };
}

/** What a path no route declares gets: core's 404. */
export function notFound(_req: IncomingMessage, res: ServerResponse): void {
  sendError(res, 404, 'not_found', 'no such endpoint');
}
