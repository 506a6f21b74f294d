import { collectDefaultMetrics, Counter, Registry } from 'prom-client';

/** The error backend's own registry (served on its admin port) and the counter its answers record into. */
export interface IngressErrorsMetrics {
  registry: Registry;
  /** Refusals answered, by the status the ingress reported (`no_endpoint`: no ready endpoint) and the status sent. */
  answered: Counter<'ingress_status' | 'status'>;
}

export function createIngressErrorsMetrics(options: { defaultMetrics?: boolean } = {}): IngressErrorsMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'chat_ingress_errors_' });
  const answered = new Counter({
    name: 'chat_ingress_errors_total',
    help: 'Refusals answered for the ingress, by the status the ingress reported (`no_endpoint`: the Service had no ready endpoint) and the status sent.',
    labelNames: ['ingress_status', 'status'],
    registers: [registry],
  });
  return { registry, answered };
}
