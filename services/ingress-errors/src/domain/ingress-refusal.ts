import { AppError } from '@chat/contracts';

/** The spec's stream paths (section 4): a refusal on one of them is the stream listener's. */
const STREAM_PATH = /^\/v1\/repositories\/[^/?]+\/(?:branches\/[^/?]+\/)?(?:room|inbox)\/events\/?(?:\?|$)/;

/** What the ingress tells its error backend about a refusal it made (ingress-nginx `custom-http-errors`). */
export interface IngressRefusalInput {
  /**
   * The status the ingress was about to send (`X-Code`); undefined when the ingress sent the request
   * itself to the error backend, which it does when the routed Service has no ready endpoint.
   */
  ingressStatus: number | undefined;
  /** Path (and query) of the refused request (`X-Original-URI`, or the request's own). */
  originalUri: string;
}

/**
 * The spec's answer for a request the ingress refused or could not deliver, so a client behind the
 * ingress meets only statuses and codes of the spec (sections 4 and 7), in the envelope:
 * - 413 (body above the ingress's `proxy-body-size`): 400 REQUEST_INVALID, the answer the API gives
 *   a body above its own limit;
 * - 502, 504, and no ready endpoint: 503, STREAM_UNAVAILABLE on a stream path and STORE_UNAVAILABLE
 *   elsewhere (the spec's "persistence unavailable": the request may or may not have been handled,
 *   and an append retried with its Idempotency-Key is safe either way), with Retry-After;
 * - any other 4xx: 400 REQUEST_INVALID; any other 5xx: 503 as above.
 */
export function ingressRefusal(input: IngressRefusalInput): AppError {
  const status = input.ingressStatus;
  if (status === 413) return new AppError('REQUEST_INVALID', 'The request body is too large.');
  if (status !== undefined && status >= 400 && status < 500) {
    return new AppError('REQUEST_INVALID', 'The request was refused before it reached the service.');
  }
  // No ready endpoint at all (a rollout gone wrong, every pod failing) lasts longer than one pod's
  // crash or a timeout, which the next attempt usually gets past.
  const retryAfterSeconds = status === undefined ? 5 : 1;
  if (STREAM_PATH.test(input.originalUri)) {
    return new AppError('STREAM_UNAVAILABLE', 'The event stream is unavailable; retry after Retry-After seconds from the last durable cursor.', { retryAfterSeconds });
  }
  return new AppError(
    'STORE_UNAVAILABLE',
    'The service is unavailable; retry after Retry-After seconds (an append with the same Idempotency-Key).',
    { retryAfterSeconds },
  );
}

/** `X-Code` as a status, or undefined when absent or not a three-digit status. */
export function parseIngressStatus(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && /^[1-5][0-9]{2}$/.test(value) ? Number(value) : undefined;
}
