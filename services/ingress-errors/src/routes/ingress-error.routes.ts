import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { errorEnvelope, newUlid, REQUEST_ID_PATTERN } from '@chat/contracts';
import { writeJson } from '@chat/http-kit';
import type { Logger } from '@chat/observability';
import type { Counter } from 'prom-client';
import { ingressRefusal, parseIngressStatus } from '../domain/ingress-refusal.ts';

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The ingress's error backend: every request, whatever its method and path, gets the envelope of
 * `ingressRefusal`. ingress-nginx calls it in two ways: for a refusal listed in the Ingress's
 * `custom-http-errors` (headers `X-Code`, `X-Original-URI`, `X-Request-ID`), and, as the Ingress's
 * `default-backend`, with the client's own request when the routed Service has no ready endpoint.
 *
 * The request ID is the one the ingress passes on (the client's `X-Request-Id`, or the ingress's
 * own), so the envelope, the ingress's access log and the client agree; a malformed one is replaced
 * by a fresh ULID rather than refused, since the refusal being answered is not about it. Nothing of
 * the request is read but those headers: a body is drained unread, a bearer token never looked at.
 */
export function createIngressErrorListener(deps: { logger: Logger; answered: Counter<'ingress_status' | 'status'> }): RequestListener {
  const { answered } = deps;
  const respond = (req: IncomingMessage, res: ServerResponse): void => {
    const forwarded = header(req, 'x-request-id');
    const requestId = forwarded !== undefined && REQUEST_ID_PATTERN.test(forwarded) ? forwarded : newUlid();
    const ingressStatus = parseIngressStatus(req.headers['x-code']);
    const originalUri = header(req, 'x-original-uri') ?? req.url ?? '/';
    const error = ingressRefusal({ ingressStatus, originalUri });
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('Cache-Control', 'no-store');
    if (error.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(error.retryAfterSeconds));
    writeJson(res, error.status, errorEnvelope(error.code, error.message, requestId));
    answered.inc({ ingress_status: ingressStatus === undefined ? 'no_endpoint' : String(ingressStatus), status: String(error.status) });
    // The path only: a query may carry a cursor, which is no secret but no business of the log either.
    deps.logger.info({ requestId, ingressStatus: ingressStatus ?? 'no_endpoint', status: error.status, code: error.code, path: originalUri.split('?')[0] }, 'ingress refusal answered');
  };
  return (req, res) => {
    // The answer waits until the body is drained (at most BODY_DRAIN_MS): sent while body bytes are
    // still arriving on a connection the client asked to close, the close would meet those bytes
    // with a reset, which can destroy the answer before the client reads it.
    let sent = false;
    const send = () => {
      if (sent) return;
      sent = true;
      clearTimeout(timer);
      respond(req, res);
    };
    const timer = setTimeout(send, BODY_DRAIN_MS);
    req.once('end', send);
    req.once('error', send);
    req.resume();
  };
}

/** How long an answer waits for the request's body to be drained; the ingress buffers bodies, so it is seldom more than a few ms. */
const BODY_DRAIN_MS = 1000;
