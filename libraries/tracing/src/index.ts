/**
 * OpenTelemetry tracing for the chat services: off unless an OTLP endpoint is configured, and then one
 * trace per append, from the API's request through core's authorization, the commit and the publish
 * to every gateway's delivery (docs/operations.md, Tracing). Each instrumentation point calls one
 * function here, which answers undefined (or runs its work bare) while tracing is off.
 */
export { activeTracer, installTracer, runUntraced } from './active-tracer.ts';
export { startTracing, type Tracing } from './start-tracing.ts';
export { startRequestSpan, type RequestSpan, type TracedRequest } from './request-span.ts';
export { traceCoreCall, type CoreCallSpan } from './core-call-span.ts';
export { startCommitSpan, type CommitSpan } from './commit-span.ts';
export { startPublishSpan, startRelaySpan, type PublishSpan } from './publish-span.ts';
export { startDeliverySpan, traceEventHandling, type DeliverySpan, type TracedEvent } from './consumer-span.ts';
export { contextOfTraceparent, formatTraceparent, parseTraceparent } from './traceparent.ts';
