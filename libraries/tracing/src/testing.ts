/**
 * Tracing for tests (`@chat/tracing/testing`): on, as startTracing turns it on, with ended spans kept
 * in memory. A module of its own so that a service importing `@chat/tracing` never loads the SDK.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor, type ReadableSpan, type Sampler } from '@opentelemetry/sdk-trace-node';
import { installTracer } from './active-tracer.ts';

export interface InMemoryTracing {
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  /** Forgets the spans ended so far. */
  reset(): void;
  /** The one ended span named `name`; fails when there is none or several. */
  span(name: string): ReadableSpan;
  /** Unregisters the provider and turns tracing off. */
  stop(): Promise<void>;
}

/** Tracing on, as startTracing turns it on, with ended spans kept in memory instead of exported. */
export function startInMemoryTracing(sampler?: Sampler): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)], ...(sampler ? { sampler } : {}) });
  provider.register();
  installTracer(provider.getTracer('test'));
  const spans = () => exporter.getFinishedSpans();
  return {
    spans,
    reset: () => exporter.reset(),
    span(name) {
      const named = spans().filter((s) => s.name === name);
      if (named.length !== 1) throw new Error(`${named.length} spans named ${name}: ${spans().map((s) => s.name).join(', ')}`);
      return named[0]!;
    },
    async stop() {
      installTracer(undefined);
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** The W3C trace-context parent of a span: its parent span's ID. */
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
