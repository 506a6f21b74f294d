import type { Tracer } from '@opentelemetry/api';

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
