import { Histogram, type Registry } from 'prom-client';

/** Request latency per operation and status, the one histogram every HTTP service exposes. */
export function createHttpDurationHistogram(registry: Registry): Histogram<'operation' | 'method' | 'status'> {
  return new Histogram({
    name: 'chat_http_request_duration_seconds',
    help: 'HTTP request latency by operation and status (streams: time to first byte of the stream)',
    labelNames: ['operation', 'method', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
}

/** Latency and outcome of every call to core, shared by every service that calls it. */
export function createCoreCallHistogram(registry: Registry): Histogram<'operation' | 'outcome'> {
  return new Histogram({
    name: 'chat_core_call_duration_seconds',
    help: 'Calls to core (authorize, resolveMentions, ping) by outcome; outcome=error counts failures',
    labelNames: ['operation', 'outcome'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
}
