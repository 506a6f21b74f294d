/**
 * Keep-alive ordering between the proxy and the services: of the two ends of an idle pooled
 * connection, the proxy must close first. A service that closes first races the proxy's next
 * request on that connection, which then fails as a 502/503 nobody refused.
 */
import { durationSeconds } from './custom-resource-schema.ts';
import { backendPolicyFor, httpsRouteRules } from './gateway-routes.ts';
import { DEFAULT_KEEP_ALIVE_TIMEOUT_MS, ENVOY_DEFAULT_UPSTREAM_IDLE_SECONDS, INGRESS_NGINX_UPSTREAM_KEEPALIVE_MS, KEEP_ALIVE_MARGIN_MS } from './ingress-catalog.ts';
import { containerEnv, issueFor, ofKind, workloads, type Rule, type RuleContext } from './rule-context.ts';
import type { Issue, KubeObject } from './issue.ts';

/** A proxy's upstream side toward one Service: how long it keeps an idle connection, and where that is set. */
interface UpstreamIdle {
  file: string;
  object: KubeObject;
  service: string;
  idleMs: number;
  source: string;
}

function upstreams(ctx: RuleContext): UpstreamIdle[] {
  const fromRoutes = httpsRouteRules(ctx).flatMap(({ file, route, rule }) => {
    const policy = backendPolicyFor(ctx, route);
    const configured = durationSeconds((policy?.object.spec as { timeout?: { http?: { connectionIdleTimeout?: string } } } | undefined)?.timeout?.http?.connectionIdleTimeout);
    const idleMs = (configured ?? ENVOY_DEFAULT_UPSTREAM_IDLE_SECONDS) * 1000;
    const source = configured === undefined ? `Envoy Gateway's default connectionIdleTimeout (${ENVOY_DEFAULT_UPSTREAM_IDLE_SECONDS} s)` : `BackendTrafficPolicy ${policy!.object.metadata?.name} connectionIdleTimeout`;
    return (rule.backendRefs ?? []).map((b) => ({ file, object: route, service: b.name, idleMs, source }));
  });
  const fromIngresses = ofKind(ctx, 'Ingress').flatMap(({ file, object }) => {
    const rules = (object.spec as { rules?: Array<{ http?: { paths: Array<{ backend: { service?: { name: string } } }> } }> }).rules ?? [];
    return rules.flatMap((r) => r.http?.paths ?? []).flatMap((p) => (p.backend.service ? [p.backend.service.name] : []))
      .map((service) => ({ file, object, service, idleMs: INGRESS_NGINX_UPSTREAM_KEEPALIVE_MS, source: "ingress-nginx's upstream-keepalive-timeout (60 s)" }));
  });
  return [...fromRoutes, ...fromIngresses];
}

/** The keep-alive timeout of each container behind a Service, as its environment sets it. */
function serviceKeepAlives(ctx: RuleContext, serviceName: string): Array<{ workload: string; keepAliveMs: number }> {
  const service = ofKind(ctx, 'Service').find((s) => s.object.metadata?.name === serviceName);
  const selector = (service?.object.spec as { selector?: Record<string, string> } | undefined)?.selector ?? {};
  if (Object.keys(selector).length === 0) return [];
  return workloads(ctx)
    .filter(({ object, podLabels }) => object.kind === 'Deployment' && Object.entries(selector).every(([k, v]) => podLabels[k] === v))
    .map(({ object, pod }) => {
      const value = containerEnv(ctx, pod.containers[0]!).get('HTTP_KEEP_ALIVE_TIMEOUT_MS');
      return { workload: object.metadata?.name ?? '?', keepAliveMs: typeof value === 'string' ? Number(value) : DEFAULT_KEEP_ALIVE_TIMEOUT_MS };
    });
}

/**
 * Every service behind a route keeps an idle connection open at least {@link KEEP_ALIVE_MARGIN_MS}
 * longer (HTTP_KEEP_ALIVE_TIMEOUT_MS) than the proxy keeps it in its pool, so the proxy closes first.
 */
export const keepAliveOrdered: Rule = (ctx) => {
  const issues: Issue[] = [];
  const seen = new Set<string>();
  for (const upstream of upstreams(ctx)) {
    for (const { workload, keepAliveMs } of serviceKeepAlives(ctx, upstream.service)) {
      const key = `${upstream.file}|${upstream.object.metadata?.name}|${workload}`;
      if (seen.has(key)) continue;
      seen.add(key);
      if (!(keepAliveMs >= upstream.idleMs + KEEP_ALIVE_MARGIN_MS)) {
        issues.push(issueFor(upstream.file, upstream.object, `${workload} closes idle connections after HTTP_KEEP_ALIVE_TIMEOUT_MS ${keepAliveMs} ms, but the proxy keeps them ${upstream.idleMs} ms (${upstream.source}): the service must wait at least ${upstream.idleMs + KEEP_ALIVE_MARGIN_MS} ms, so the proxy always closes first`));
      }
    }
  }
  return issues;
};
