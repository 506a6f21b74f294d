/**
 * The metrics each workload serves on its admin port's /metrics, read from the service's own
 * registry (not from a list kept here), so an autoscaler can only name a metric that exists.
 */
import { createGatewayMetrics } from '@chat/stream-gateway';

/** Metric name → Prometheus type (`gauge`, `counter`, `histogram`, ...). */
export type MetricTypes = ReadonlyMap<string, string>;

function typesOf(registry: { getMetricsAsArray(): Array<{ name: string }> }): MetricTypes {
  return new Map(registry.getMetricsAsArray().map((m) => [m.name, String((m as { type?: unknown }).type)]));
}

/** By `app.kubernetes.io/component`: the workloads an autoscaler may scale on a custom metric of. */
export const EXPORTED_METRICS: Readonly<Record<string, () => MetricTypes>> = {
  'stream-gateway': () => typesOf(createGatewayMetrics(() => undefined, { defaultMetrics: false }).registry),
};
