import { ROOT_CONTEXT, SpanKind, type Attributes, type Span } from '@opentelemetry/api';
import { activeTracer, childTracer } from './active-tracer.ts';
import {
  ATTR_MESSAGING_BATCH_MESSAGE_COUNT,
  ATTR_MESSAGING_DESTINATION_NAME,
  ATTR_MESSAGING_OPERATION_TYPE,
  ATTR_MESSAGING_SYSTEM,
  ATTR_RELAY_ENTRIES,
  ATTR_SCOPE_KEY,
  ATTR_SEQ,
  MESSAGING_SYSTEM_BACKBONE,
} from './span-attributes.ts';
import { recordFailure } from './span-failure.ts';
import { formatTraceparent } from './traceparent.ts';

/**
 * A producer span around a publish to the backbone. Its `traceparent` travels inside the events it
 * publishes, so each consumer's span (a gateway's delivery, the notifier's fanout) is its child.
 */
export interface PublishSpan {
  /** Written into each event this publish sends. */
  readonly traceparent: string;
  /** The backbone took the events: `events` went in the one backbone call. */
  published(events: number): void;
  /** The backbone call failed (the outbox relay publishes the entries later); ignored once the span ended. */
  fail(err: unknown): void;
}

class BackbonePublishSpan implements PublishSpan {
  readonly traceparent: string;
  private ended = false;

  constructor(private readonly span: Span) {
    this.traceparent = formatTraceparent(span.spanContext());
  }

  published(events: number): void {
    if (this.ended) return;
    this.ended = true;
    this.span.setAttribute(ATTR_MESSAGING_BATCH_MESSAGE_COUNT, events);
    this.span.end();
  }

  fail(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    recordFailure(this.span, err);
    this.span.end();
  }
}

const producer = (attributes: Attributes) => ({
  kind: SpanKind.PRODUCER,
  attributes: { [ATTR_MESSAGING_SYSTEM]: MESSAGING_SYSTEM_BACKBONE, [ATTR_MESSAGING_OPERATION_TYPE]: 'send', ...attributes },
});

/**
 * `publish <channel>`, a child of the active span: a committed message's publish right after its
 * commit, in its request's trace (the publisher sends the messages of one event-loop turn in one
 * backbone call; each keeps its own span), or the notifier's publish of a traced fanout's
 * notifications (several inboxes: no one scope). Undefined while tracing is off or no span is active.
 */
export function startPublishSpan(channel: string, scopeKey?: string, seq?: number): PublishSpan | undefined {
  const tracer = childTracer();
  if (!tracer) return undefined;
  const attributes: Attributes = { [ATTR_MESSAGING_DESTINATION_NAME]: channel };
  if (scopeKey !== undefined) attributes[ATTR_SCOPE_KEY] = scopeKey;
  if (seq !== undefined) attributes[ATTR_SEQ] = seq;
  return new BackbonePublishSpan(tracer.startSpan(`publish ${channel}`, producer(attributes)));
}

/**
 * `relay outbox`: a relay sweep's publish of entries nobody published after commit (a crash, a
 * backbone outage). The outbox keeps no request's trace, so this is the root of a trace of its own,
 * which the deliveries of its events join. Undefined while tracing is off.
 */
export function startRelaySpan(entries: number): PublishSpan | undefined {
  const tracer = activeTracer();
  if (!tracer) return undefined;
  return new BackbonePublishSpan(tracer.startSpan('relay outbox', producer({ [ATTR_RELAY_ENTRIES]: entries }), ROOT_CONTEXT));
}
