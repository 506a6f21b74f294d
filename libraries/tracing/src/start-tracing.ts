import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import type { TracingConfig } from '@chat/service-config';
import { installTracer } from './active-tracer.ts';

/** The part of a pino logger tracing writes to. */
interface TracingLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** The process's tracing, as its composition root holds it. */
export interface Tracing {
  /** Whether spans are recorded and exported. */
  readonly enabled: boolean;
  /** Exports the spans still buffered (for at most `SHUTDOWN_FLUSH_MS`) and turns tracing off; the last step of a SIGTERM drain. */
  shutdown(): Promise<void>;
}

/** Longest wait for the last export at shutdown: a collector that is down must not hold a drain. */
const SHUTDOWN_FLUSH_MS = 5000;

const TRACING_OFF: Tracing = { enabled: false, shutdown: async () => undefined };

/**
 * Starts tracing when `config` names an OTLP traces URL; otherwise loads no SDK, and every span point
 * stays a no-op (see active-tracer.ts). The SDK's own troubles (a failed export) go to `log` as warnings.
 */
export async function startTracing(config: TracingConfig | undefined, log: TracingLog): Promise<Tracing> {
  const tracesUrl = config?.tracesUrl;
  if (config === undefined || tracesUrl === undefined) return TRACING_OFF;
  const { startTracingSdk } = await import('./tracing-sdk.ts');
  diag.setLogger(
    {
      error: (message) => log.warn({ component: 'opentelemetry' }, message),
      warn: (message) => log.warn({ component: 'opentelemetry' }, message),
      info: () => undefined,
      debug: () => undefined,
      verbose: () => undefined,
    },
    DiagLogLevel.WARN,
  );
  const sdk = startTracingSdk({ ...config, tracesUrl });
  installTracer(sdk.tracer);
  // The URL's host only: a collector URL may carry credentials.
  log.info({ collector: new URL(tracesUrl).host, serviceName: config.serviceName, sampler: config.sampler, samplerRatio: config.samplerRatio }, 'tracing on: spans exported by OTLP/HTTP');
  return {
    enabled: true,
    async shutdown() {
      installTracer(undefined);
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_FLUSH_MS).unref()));
      await Promise.race([sdk.shutdown().catch((err: unknown) => log.warn({ err }, 'tracing: the last spans could not be exported')), deadline]);
      clearTimeout(timer);
      trace.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    },
  };
}
