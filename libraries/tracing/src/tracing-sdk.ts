/**
 * The OpenTelemetry SDK as chat runs it; loaded only when an OTLP endpoint is configured, so a process
 * with tracing off never loads it.
 */
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracesSampler } from '@chat/service-config';
import { hostname } from 'node:os';

/** What {@link startTracingSdk} needs: where spans go, under which name, and which are kept. */
export interface TracingSdkSettings {
  tracesUrl: string;
  serviceName: string;
  sampler: TracesSampler;
  samplerRatio: number;
  exportDelayMs: number;
}

/** The sampler `OTEL_TRACES_SAMPLER` names, as the OpenTelemetry specification defines each. */
export function samplerOf(kind: TracesSampler, ratio: number): Sampler {
  switch (kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

export interface TracingSdk {
  tracer: Tracer;
  /** Exports the spans still buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

/**
 * Starts the SDK: a batch span processor exporting OTLP/HTTP (JSON) to `tracesUrl`, registered as the
 * process's global provider with the async-local-storage context manager (a request's span follows
 * its awaits) and the W3C trace-context propagator.
 */
export function startTracingSdk(settings: TracingSdkSettings): TracingSdk {
  const exporter = new OTLPTraceExporter({ url: settings.tracesUrl });
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, 'service.instance.id': `${hostname()}-${process.pid}` }),
    ),
    sampler: samplerOf(settings.sampler, settings.samplerRatio),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: settings.exportDelayMs, maxExportBatchSize: 512, maxQueueSize: 4096 })],
  });
  provider.register();
  return { tracer: provider.getTracer('@chat/tracing'), shutdown: () => provider.shutdown() };
}
