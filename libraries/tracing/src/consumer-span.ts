import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import { activeTracer } from './active-tracer.ts';
import {
  ATTR_DELIVERY_OUTCOME,
  ATTR_DELIVERY_STREAMS,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  ATTR_PROCESS_OUTCOME,
  ATTR_SCOPE_KEY,
  ATTR_SEQ,
  MESSAGING_SYSTEM_BACKBONE,
} from './span-attributes.ts';
import { recordFailure } from './span-failure.ts';
import { contextOfTraceparent } from './traceparent.ts';

/** What a consumer's span is told of the event it handles. */
export interface TracedEvent {
  channel: string;
  scopeKey: string;
  seq: number;
  /** The publish span's `traceparent`, carried inside the event; absent from events published untraced. */
  traceparent?: string | undefined;
}

/**
 * A gateway's delivery of one backbone event to its streams of the event's scope: from the moment it
 * reads the event (the ordering wait for a missing earlier event included) to the last stream write
 * of its fanout. One span per event per gateway, never one per stream.
 */
export interface DeliverySpan {
  /** The fanout handed the event to `streams` streams. */
  delivered(streams: number): void;
  /** The event reached no stream: `late`, `dropped` or `closed` (see ATTR_DELIVERY_OUTCOME). */
  skipped(outcome: 'late' | 'dropped' | 'closed'): void;
}

class GatewayDeliverySpan implements DeliverySpan {
  private ended = false;

  constructor(private readonly span: Span) {}

  delivered(streams: number): void {
    this.finish('delivered', streams);
  }

  skipped(outcome: 'late' | 'dropped' | 'closed'): void {
    this.finish(outcome, 0);
  }

  private finish(outcome: string, streams: number): void {
    if (this.ended) return;
    this.ended = true;
    this.span.setAttribute(ATTR_DELIVERY_OUTCOME, outcome);
    this.span.setAttribute(ATTR_DELIVERY_STREAMS, streams);
    this.span.end();
  }
}

function consumerSpan(verb: string, event: TracedEvent & { traceparent: string }): Span | undefined {
  const tracer = activeTracer();
  if (!tracer) return undefined;
  return tracer.startSpan(
    `${verb} ${event.channel}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM_BACKBONE,
        [ATTR_MESSAGING_DESTINATION_NAME]: event.channel,
        [ATTR_MESSAGING_OPERATION_TYPE]: 'process',
        [ATTR_SCOPE_KEY]: event.scopeKey,
        [ATTR_SEQ]: event.seq,
      },
    },
    contextOfTraceparent(event.traceparent),
  );
}

/**
 * `deliver <channel>`: a child of the publish span the event names. Undefined while tracing is off,
 * and for an event that carries no trace (published untraced, or by an older publisher).
 */
export function startDeliverySpan(event: TracedEvent): DeliverySpan | undefined {
  if (event.traceparent === undefined) return undefined;
  const span = consumerSpan('deliver', event as TracedEvent & { traceparent: string });
  return span && new GatewayDeliverySpan(span);
}

/**
 * Runs a consumer group's handler for one event in a span `process <channel>`, a child of the
 * publish span the event names, active while `handle` runs (so its calls to core are its children).
 * `outcomeOf` names what the handler made of it. Runs `handle` bare while tracing is off or the
 * event carries no trace.
 */
export async function traceEventHandling<T>(event: TracedEvent, handle: () => Promise<T>, outcomeOf: (result: T) => string): Promise<T> {
  if (event.traceparent === undefined) return handle();
  const span = consumerSpan('process', event as TracedEvent & { traceparent: string });
  if (!span) return handle();
  try {
    const result = await context.with(trace.setSpan(context.active(), span), handle);
    span.setAttribute(ATTR_PROCESS_OUTCOME, outcomeOf(result));
    return result;
  } catch (err) {
    recordFailure(span, err);
    throw err;
  } finally {
    span.end();
  }
}
