/**
 * Rules for the proxy tier itself: a maintained Gateway API implementation whose configuration
 * changes leave open streams alone (never ingress-nginx, which is retired and cuts every stream at
 * each reload), proxy pods that drain for longer than a stream lives, and a fleet sized from
 * docs/capacity.md's design load at two proxy connections per stream.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { adapterRules } from './autoscaler-rules.ts';
import { durationSeconds } from './custom-resource-schema.ts';
import { backendPolicyFor, clientPolicyFor, controllerOf, envoyProxyFor, gateways, type Placed } from './gateway-routes.ts';
import { ENVOY_DEFAULT_CIRCUIT_BREAKER, ENVOY_DEFAULT_DRAIN_SECONDS, ENVOY_GATEWAY_CONTROLLER, PROXY_CONNECTIONS_METRIC, PROXY_CONNECTIONS_PER_STREAM } from './ingress-catalog.ts';
import { issueFor, ofKind, workloads, type Rule, type RuleContext } from './rule-context.ts';
import { DESIGN_LOAD_MARGIN, HPA_TOLERANCE } from './service-catalog.ts';
import { longestStreamSeconds, streamRouteRules } from './stream-route-rules.ts';
import type { Issue, KubeObject } from './issue.ts';

type Spec = Record<string, any>;
const specOf = (placed: Placed | undefined): Spec => (placed?.object.spec ?? {}) as Spec;

/** The one Gateway of the manifests, or an issue saying why there is none to check. */
function theGateway(ctx: RuleContext, what: string): { gateway?: Placed; issues: Issue[] } {
  const found = gateways(ctx);
  if (found.length === 1) return { gateway: found[0], issues: [] };
  return { issues: [{ file: '(ingress)', message: `expected one Gateway (gateway.networking.k8s.io), found ${found.length}: ${what}` }] };
}

/** No Ingress (ingress-nginx is retired and reloads cut streams); one Gateway of Envoy Gateway's class. */
export const maintainedIngressTier: Rule = (ctx) => {
  const issues: Issue[] = ofKind(ctx, 'Ingress').map(({ file, object }) => {
    const className = (object.spec as { ingressClassName?: string }).ingressClassName ?? 'the default class';
    return issueFor(file, object, `an Ingress (${className}): ingress-nginx is retired upstream and every reload (any Ingress or certificate change) cuts every open stream at worker-shutdown-timeout; route through the Gateway API (HTTPRoute) instead`);
  });
  const { gateway, issues: none } = theGateway(ctx, 'the streams need a Gateway API proxy tier');
  if (!gateway) return [...issues, ...none];
  const controller = controllerOf(ctx, gateway.object);
  if (controller !== ENVOY_GATEWAY_CONTROLLER) {
    issues.push(issueFor(gateway.file, gateway.object, `its GatewayClass must be one of these manifests with controllerName ${ENVOY_GATEWAY_CONTROLLER} (xDS updates without reloads, draining proxy pods), has ${controller ?? 'none'}`));
  }
  return issues;
};

/** The proxy pods drain for longer than a stream lives (and than a gateway pod drains), and hold streams' priority. */
export const proxyDrainOutlastsStreams: Rule = (ctx) => {
  const { gateway, issues } = theGateway(ctx, 'nothing drains the proxies: a stopping ingress-nginx pod cuts its streams at worker-shutdown-timeout');
  if (!gateway) return issues;
  const proxy = envoyProxyFor(ctx, gateway.object);
  if (!proxy) return [issueFor(gateway.file, gateway.object, 'names no EnvoyProxy (infrastructure.parametersRef): its proxy pods would drain for the default 60 s and cut longer streams')];
  const spec = specOf(proxy);
  const drain = durationSeconds(spec.shutdown?.drainTimeout) ?? ENVOY_DEFAULT_DRAIN_SECONDS;
  const longest = longestStreamSeconds(ctx);
  const gatewayPod = workloads(ctx).find((w) => w.podLabels['app.kubernetes.io/component'] === 'stream-gateway');
  const gatewayGrace = gatewayPod?.pod.terminationGracePeriodSeconds ?? 30;
  const say = (message: string) => issues.push(issueFor(proxy.file, proxy.object, message));
  if (drain < longest) say(`shutdown.drainTimeout ${drain} s is shorter than a stream lives (${longest} s): a stopping proxy pod would cut the streams it holds instead of letting each end with its handoff`);
  if (drain <= gatewayGrace) say(`shutdown.drainTimeout ${drain} s must be longer than a gateway pod's drain (terminationGracePeriodSeconds ${gatewayGrace})`);
  const priorityName = spec.provider?.kubernetes?.envoyDeployment?.pod?.priorityClassName as string | undefined;
  const priority = ofKind(ctx, 'PriorityClass').find((p) => p.object.metadata?.name === priorityName)?.object as (KubeObject & { value?: number }) | undefined;
  if (!priority || !(Number(priority.value) > 0)) say(`the proxy pods hold streams: envoyDeployment.pod.priorityClassName must name a PriorityClass of these manifests above 0 (has ${JSON.stringify(priorityName ?? null)})`);
  return issues;
};

/** The load docs/capacity.md sizes for, in concurrent streams. */
function designStreams(repoRoot: string): number | undefined {
  const path = join(repoRoot, 'docs/capacity.md');
  if (!existsSync(path)) return undefined;
  const match = /Target load: \*\*([\d,]+) concurrent streams/.exec(readFileSync(path, 'utf8'));
  return match ? Number(match[1]!.replaceAll(',', '')) : undefined;
}

/** A count written as a Kubernetes quantity (`20k`, `20000`). */
function count(value: unknown): number {
  const match = /^([0-9.]+)(k|M)?$/.exec(String(value ?? ''));
  return match ? Number(match[1]) * (match[2] === 'k' ? 1e3 : match[2] === 'M' ? 1e6 : 1) : Number.NaN;
}

const formatted = (n: number) => n.toLocaleString('en-US');

/**
 * Connections sized from docs/capacity.md: each proxy pod caps its client connections
 * (ClientTrafficPolicy), its autoscaler targets a per-pod connection count the cap takes with more
 * than the HPA's tolerance to spare and reaches the design load plus a margin, the stream route's
 * circuit breaker lets a pod hold as many gateway connections as client ones, and docs/capacity.md
 * states the proxy connections (two per stream) and pods that follow.
 */
export const proxyConnectionsSized: Rule = (ctx) => {
  const { gateway, issues } = theGateway(ctx, "nothing sizes the proxies' connections (each stream holds 2: the client's and the upstream one)");
  if (!gateway) return issues;
  const design = designStreams(ctx.repoRoot);
  if (design === undefined) return [{ file: 'docs/capacity.md', message: 'states no "Target load: **N concurrent streams**" to size the proxies from' }];
  const clients = clientPolicyFor(ctx, gateway.object);
  const cap = Number(specOf(clients).connection?.connectionLimit?.value);
  if (!clients || !Number.isFinite(cap)) return [issueFor(gateway.file, gateway.object, "no ClientTrafficPolicy sets connection.connectionLimit.value: a proxy pod's client connections are unbounded")];
  const proxy = envoyProxyFor(ctx, gateway.object);
  const hpa = specOf(proxy).provider?.kubernetes?.envoyHpa as { maxReplicas?: number; metrics?: Array<{ type: string; pods?: { metric?: { name?: string }; target?: { type?: string; averageValue?: unknown } } }> } | undefined;
  const metric = hpa?.metrics?.find((m) => m.type === 'Pods' && m.pods?.metric?.name === PROXY_CONNECTIONS_METRIC);
  const target = count(metric?.pods?.target?.averageValue);
  const at = proxy ?? gateway;
  if (!hpa || !metric || metric.pods?.target?.type !== 'AverageValue' || !Number.isFinite(target)) {
    issues.push(issueFor(at.file, at.object, `the proxies' envoyHpa must scale on the Pods metric ${PROXY_CONNECTIONS_METRIC} with an AverageValue target: CPU alone leaves idle streams' pods at their cap`));
    return issues;
  }
  if (!adapterRules(ctx).rules.some((r) => r.served === PROXY_CONNECTIONS_METRIC)) issues.push(issueFor(at.file, at.object, `Pods metric ${PROXY_CONNECTIONS_METRIC} is served by no prometheus-adapter rule`));
  if (target * (1 + HPA_TOLERANCE) >= cap) {
    issues.push(issueFor(at.file, at.object, `target ${target} connections per proxy pod leaves no headroom: the autoscaler acts only past ${Math.round(target * (1 + HPA_TOLERANCE))}, at or above the connection limit ${cap}`));
  }
  const pods = Math.ceil((design * (1 + DESIGN_LOAD_MARGIN)) / target);
  if ((hpa.maxReplicas ?? 0) < pods) issues.push(issueFor(at.file, at.object, `envoyHpa.maxReplicas ${hpa.maxReplicas} holds ${(hpa.maxReplicas ?? 0) * target} streams at the target; docs/capacity.md's ${design} plus ${DESIGN_LOAD_MARGIN * 100} % needs ${pods}`));
  for (const { rule } of streamRouteRules(ctx).rules) {
    const breaker = specOf(backendPolicyFor(ctx, rule.route)).circuitBreaker ?? {};
    for (const field of ['maxConnections', 'maxParallelRequests'] as const) {
      const value = Number(breaker[field] ?? ENVOY_DEFAULT_CIRCUIT_BREAKER);
      if (value < cap) issues.push(issueFor(rule.file, rule.route, `the stream route's circuitBreaker.${field} ${value} is below the proxy pod's ${cap} client connections: each stream holds one gateway connection, and the ${value + 1}th would be refused`));
    }
  }
  const docs = join(ctx.repoRoot, 'docs/capacity.md');
  const text = readFileSync(docs, 'utf8');
  for (const phrase of [`${formatted(design * PROXY_CONNECTIONS_PER_STREAM)} proxy connections`, `${formatted(pods)} proxy pods`]) {
    if (!text.includes(phrase)) issues.push({ file: 'docs/capacity.md', message: `must state "${phrase}" (${formatted(design)} streams × ${PROXY_CONNECTIONS_PER_STREAM} connections; pods at ${formatted(target)} connections each plus ${DESIGN_LOAD_MARGIN * 100} %)` });
  }
  return issues;
};
