/**
 * The metrics each workload serves on its admin port's /metrics, read from the service's own
 * registry (not from a list kept here), so an autoscaler, an alert or a dashboard panel can only name
 * a metric that exists. Each registry is built as the service builds it, Node's process metrics
 * included (`chat_<service>_process_*`); nothing is started or connected.
 */
import { createApiMetrics } from '@chat/api';
import { createIngressErrorsMetrics } from '@chat/ingress-errors';
import { createNotifierMetrics } from '@chat/notifier';
import { createGatewayMetrics } from '@chat/stream-gateway';

/** Metric name → Prometheus type (`gauge`, `counter`, `histogram`, ...). */
export type MetricTypes = ReadonlyMap<string, string>;

function typesOf(registry: { getMetricsAsArray(): Array<{ name: string }> }): MetricTypes {
  return new Map(registry.getMetricsAsArray().map((m) => [m.name, String((m as { type?: unknown }).type)]));
}

const nothing = async () => ({ pending: 0, dead: 0 });

/**
 * By `app.kubernetes.io/component`, which the ServiceMonitor also makes each series' `job`: the
 * workloads whose metrics an autoscaler, an alert or a dashboard may read.
 */
export const EXPORTED_METRICS: Readonly<Record<string, () => MetricTypes>> = {
  api: () => typesOf(createApiMetrics({ outbox: { depth: async () => 0 } as never }).registry),
  'stream-gateway': () => typesOf(createGatewayMetrics(() => undefined).registry),
  notifier: () => typesOf(createNotifierMetrics({ fanoutCounts: nothing }).registry),
  'ingress-errors': () => typesOf(createIngressErrorsMetrics().registry),
};
