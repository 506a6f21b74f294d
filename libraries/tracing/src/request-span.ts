import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import { activeTracer } from './active-tracer.ts';
import { ATTR_ERROR_TYPE, ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_REQUEST_ID, ATTR_URL_PATH } from './span-attributes.ts';

/** An API request's server span, from its route's match to its response's close. */
export interface RequestSpan {
  /** Runs `serve` with the span as the active context: spans made under it are its children. */
  within<T>(serve: () => T): T;
  /** Ends the span with the response's status (5xx marks it failed). */
  end(status: number): void;
}

export interface TracedRequest {
  method: string;
  /** The route template (`/v1/repositories/:repositoryId/messages`): the span's name, never the path. */
  route: string;
  /** The path without its query (a query may carry a cursor). */
  path: string;
  requestId: string;
  /** Read for `traceparent` and `tracestate` only: a caller's trace is continued. */
  headers: IncomingHttpHeaders;
}

class ServerSpan implements RequestSpan {
  private readonly context: Context;

  constructor(
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  within<T>(serve: () => T): T {
    return context.with(this.context, serve);
  }

  end(status: number): void {
    this.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    if (status >= 500) {
      this.span.setAttribute(ATTR_ERROR_TYPE, String(status));
      this.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.span.end();
  }
}

/**
 * The server span of a request, named `METHOD /route/template`, parented by the caller's W3C
 * `traceparent` when it sends one; undefined while tracing is off.
 */
export function startRequestSpan(request: TracedRequest): RequestSpan | undefined {
  const tracer = activeTracer();
  if (!tracer) return undefined;
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  const span = tracer.startSpan(
    `${request.method} ${request.route}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_HTTP_ROUTE]: request.route,
        [ATTR_URL_PATH]: request.path,
        [ATTR_REQUEST_ID]: request.requestId,
      },
    },
    parent,
  );
  return new ServerSpan(span, parent);
}
