import { context, ROOT_CONTEXT, trace, type Tracer } from '@opentelemetry/api';

/**
 * The process's tracer while tracing is on; undefined while it is off. Every span point reads this
 * first and does nothing else when it is undefined: no span, no context, no object, so a process
 * without an OTLP endpoint pays one comparison per point (the api's no-op tracer would still
 * allocate a span object per call).
 */
let current: Tracer | undefined;

/** The tracer spans are made with, or undefined when tracing is off. */
export function activeTracer(): Tracer | undefined {
  return current;
}

/** Installed by {@link startTracing} (and by tests with an in-memory provider); undefined turns tracing off. */
export function installTracer(tracer: Tracer | undefined): void {
  current = tracer;
}

/**
 * The tracer for a span that is part of work already traced (a request's core call, commit or
 * publish; a traced event's handling): undefined while tracing is off and when no span is active,
 * so work nothing traced (a stream's periodic recheck, the notifier's sweeper) starts no trace.
 */
export function childTracer(): Tracer | undefined {
  return current !== undefined && trace.getActiveSpan() !== undefined ? current : undefined;
}

/**
 * Runs `work` outside whatever trace is active, for background work that outlives the traced work
 * that started it (the notifier's drain of a room, which runs other messages' fanouts).
 */
export function runUntraced<T>(work: () => T): T {
  return current === undefined ? work() : context.with(ROOT_CONTEXT, work);
}
