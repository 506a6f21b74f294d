import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import { childTracer } from './active-tracer.ts';
import { ATTR_CORE_BATCH_SIZE, ATTR_CORE_OPERATION, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from './span-attributes.ts';
import { recordFailure } from './span-failure.ts';
import { formatTraceparent } from './traceparent.ts';

/** One call to core as its caller sees it: a client span, child of the active span. */
export interface CoreCallSpan {
  /** Sent to core as the `traceparent` header, so core's own span joins the trace. */
  readonly traceparent: string;
  /**
   * The HTTP call that carried this call also carried others' (the authorize coalescer's shared
   * call): `calls` in all. Only one of them can send its `traceparent`; see docs/operations.md.
   */
  sharedBy(calls: number): void;
}

class CoreClientSpan implements CoreCallSpan {
  readonly traceparent: string;

  constructor(readonly span: Span) {
    this.traceparent = formatTraceparent(span.spanContext());
  }

  sharedBy(calls: number): void {
    this.span.setAttribute(ATTR_CORE_BATCH_SIZE, calls);
  }
}

/**
 * Runs `call` (one operation of core's API) in a client span named `core <operation>`, a child of the
 * active span, ended when the call settles, failed when it throws. `call` gets undefined while tracing
 * is off and when nothing traced runs it (a stream's periodic recheck, the readiness probe).
 */
export async function traceCoreCall<T>(operation: string, core: URL, call: (span: CoreCallSpan | undefined) => Promise<T>): Promise<T> {
  const tracer = childTracer();
  if (!tracer) return call(undefined);
  const span = tracer.startSpan(`core ${operation}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      [ATTR_CORE_OPERATION]: operation,
      [ATTR_SERVER_ADDRESS]: core.hostname,
      [ATTR_SERVER_PORT]: Number(core.port || (core.protocol === 'https:' ? 443 : 80)),
    },
  });
  try {
    return await context.with(trace.setSpan(context.active(), span), () => call(new CoreClientSpan(span)));
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}
