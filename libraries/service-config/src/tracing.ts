/**
 * OpenTelemetry's standard variables, as the chat services read them: tracing is off unless an
 * OTLP endpoint is set, and everything about it is read and checked here, once, at start.
 */
import { z } from 'zod';
import { positiveInt } from './fields.ts';

/** The samplers of OpenTelemetry's `OTEL_TRACES_SAMPLER`. */
export const TRACES_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

export type TracesSampler = (typeof TRACES_SAMPLERS)[number];

/** An http(s) URL; empty means unset, as OpenTelemetry reads its variables. */
const otlpUrl = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z
    .string()
    .url()
    .refine((v) => /^https?:\/\//i.test(v), 'expected an http:// or https:// URL')
    .optional(),
);

export const tracingFields = {
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl.describe(
    'OTLP/HTTP collector base URL; spans go to its `/v1/traces`. With it and `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` unset tracing is off and no OpenTelemetry SDK starts (docs/operations.md, Tracing)',
  ),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlpUrl.describe('full OTLP/HTTP traces URL (JSON over HTTP); takes precedence over `OTEL_EXPORTER_OTLP_ENDPOINT`'),
  OTEL_SERVICE_NAME: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .describe("spans' `service.name`; unset means the process's own (`chat-api`, `chat-stream-gateway`, `chat-notifier`, `chat-all-in-one`)"),
  OTEL_TRACES_SAMPLER: z
    .enum(TRACES_SAMPLERS)
    .default('parentbased_traceidratio')
    .describe("which traces are recorded: `parentbased_*` follows a caller's `traceparent` decision and applies the rest to new traces; `traceidratio` keeps `OTEL_TRACES_SAMPLER_ARG` of them"),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1).describe('share of new traces a `traceidratio` sampler records, from 0 to 1'),
  OTEL_BSP_SCHEDULE_DELAY: positiveInt.max(600_000).default(5000).describe('longest wait in ms before finished spans are sent (sooner once 512 wait); SIGTERM sends what is left'),
};

/** Where spans go and which are kept; `tracesUrl` undefined means tracing is off. */
export interface TracingConfig {
  /** The OTLP/HTTP traces URL; undefined: no SDK starts and every span point is a no-op. */
  tracesUrl: string | undefined;
  serviceName: string;
  sampler: TracesSampler;
  /** Share of new traces the `traceidratio` samplers keep. */
  samplerRatio: number;
  /** Longest wait before finished spans are exported. */
  exportDelayMs: number;
}

type ParsedTracingFields = z.output<z.ZodObject<typeof tracingFields>>;

/**
 * The tracing settings. `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as given; the base
 * `OTEL_EXPORTER_OTLP_ENDPOINT` gets OTLP's `v1/traces` path appended, as the OpenTelemetry SDKs do.
 */
export function tracingConfigOf(e: ParsedTracingFields, defaultServiceName: string): TracingConfig {
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT;
  const tracesUrl = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  return {
    tracesUrl,
    serviceName: e.OTEL_SERVICE_NAME ?? defaultServiceName,
    sampler: e.OTEL_TRACES_SAMPLER,
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG,
    exportDelayMs: e.OTEL_BSP_SCHEDULE_DELAY,
  };
}
