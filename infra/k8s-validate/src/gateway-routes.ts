/**
 * How the Gateway API objects of the manifests route a request, as Envoy Gateway programs them: the
 * HTTPRoutes attached to the Gateway's HTTPS listener, their path matches tried Exact first, then
 * RegularExpression (matching the whole path), then the longest PathPrefix; and the policies that
 * apply to a route (a BackendTrafficPolicy targeting the HTTPRoute, else one targeting its Gateway)
 * or to the Gateway's listeners (a ClientTrafficPolicy targeting the Gateway).
 */
import { ofKind, workloads, type RuleContext } from './rule-context.ts';
import type { KubeObject } from './issue.ts';

export interface HttpRouteRuleSpec {
  matches?: Array<{ path?: { type?: string; value?: string } }>;
  backendRefs?: Array<{ name: string; port?: number; kind?: string }>;
  filters?: Array<{ type: string }>;
  timeouts?: { request?: string; backendRequest?: string };
  retry?: { attempts?: number };
}

/** One rule of an HTTPRoute, with the route and file it belongs to. */
export interface RouteRule {
  file: string;
  route: KubeObject;
  rule: HttpRouteRuleSpec;
}

interface PathMatch {
  type: 'Exact' | 'PathPrefix' | 'RegularExpression';
  value: string;
  rule: RouteRule;
}

export interface Placed {
  file: string;
  object: KubeObject;
}

/** The Gateways of the manifests. */
export function gateways(ctx: RuleContext): Placed[] {
  return ofKind(ctx, 'Gateway');
}

/** The names of a Gateway's listeners that terminate HTTPS. */
function httpsListeners(gateway: KubeObject): Set<string> {
  const listeners = (gateway.spec as { listeners?: Array<{ name: string; protocol: string }> }).listeners ?? [];
  return new Set(listeners.filter((l) => l.protocol === 'HTTPS').map((l) => l.name));
}

/** Rules of the HTTPRoutes attached to an HTTPS listener of a Gateway of the manifests. */
export function httpsRouteRules(ctx: RuleContext): RouteRule[] {
  const byName = new Map(gateways(ctx).map((g) => [g.object.metadata?.name, httpsListeners(g.object)]));
  return ofKind(ctx, 'HTTPRoute').flatMap(({ file, object }) => {
    const spec = object.spec as { parentRefs?: Array<{ name: string; sectionName?: string; kind?: string }>; rules?: HttpRouteRuleSpec[] };
    const attached = (spec.parentRefs ?? []).some((p) => {
      const listeners = (p.kind ?? 'Gateway') === 'Gateway' ? byName.get(p.name) : undefined;
      return listeners !== undefined && (p.sectionName === undefined ? listeners.size > 0 : listeners.has(p.sectionName));
    });
    return attached ? (spec.rules ?? []).map((rule) => ({ file, route: object, rule })) : [];
  });
}

function pathMatches(rules: RouteRule[]): PathMatch[] {
  const matches = rules.flatMap((rule) =>
    (rule.rule.matches?.length ? rule.rule.matches : [{}]).map((m) => ({
      type: (m.path?.type ?? 'PathPrefix') as PathMatch['type'],
      value: m.path?.value ?? '/',
      rule,
    })),
  );
  const rank = { Exact: 0, RegularExpression: 1, PathPrefix: 2 } as const;
  return matches.sort((a, b) => rank[a.type] - rank[b.type] || b.value.length - a.value.length);
}

function matchesPath(match: PathMatch, path: string): boolean {
  if (match.type === 'Exact') return path === match.value;
  if (match.type === 'RegularExpression') return new RegExp(`^(?:${match.value})$`).test(path);
  // PathPrefix matches whole path elements: `/assets/` takes `/assets` and `/assets/x`, not `/assetsx`.
  const prefix = match.value.length > 1 ? match.value.replace(/\/+$/, '') : match.value;
  return prefix === '/' || path === prefix || path.startsWith(`${prefix}/`);
}

/** The route rule Envoy Gateway picks for a request path (query excluded), if any. */
export function ruleFor(rules: RouteRule[], path: string): RouteRule | undefined {
  return pathMatches(rules).find((m) => matchesPath(m, path))?.rule;
}

/** The `app.kubernetes.io/component` of the Deployment pods a Service selects. */
export function componentBehind(ctx: RuleContext, serviceName: string | undefined): string | undefined {
  const service = ofKind(ctx, 'Service').find((s) => s.object.metadata?.name === serviceName);
  const selector = (service?.object.spec as { selector?: Record<string, string> } | undefined)?.selector;
  if (!selector || Object.keys(selector).length === 0) return undefined;
  const pods = workloads(ctx).find(({ object, podLabels }) => object.kind === 'Deployment' && Object.entries(selector).every(([k, v]) => podLabels[k] === v));
  return pods?.podLabels['app.kubernetes.io/component'];
}

/** The components a route rule sends requests to. */
export function componentsOf(ctx: RuleContext, rule: RouteRule): string[] {
  return (rule.rule.backendRefs ?? []).map((b) => componentBehind(ctx, b.name) ?? b.name);
}

function targets(policy: KubeObject): Array<{ kind: string; name: string }> {
  return (policy.spec as { targetRefs?: Array<{ kind: string; name: string }> }).targetRefs ?? [];
}

/** The BackendTrafficPolicy that applies to an HTTPRoute: its own, else its Gateway's. */
export function backendPolicyFor(ctx: RuleContext, route: KubeObject): Placed | undefined {
  const policies = ofKind(ctx, 'BackendTrafficPolicy');
  const own = policies.find((p) => targets(p.object).some((t) => t.kind === 'HTTPRoute' && t.name === route.metadata?.name));
  if (own) return own;
  const parents = ((route.spec as { parentRefs?: Array<{ name: string }> }).parentRefs ?? []).map((p) => p.name);
  return policies.find((p) => targets(p.object).some((t) => t.kind === 'Gateway' && parents.includes(t.name)));
}

/** The ClientTrafficPolicy of a Gateway. */
export function clientPolicyFor(ctx: RuleContext, gateway: KubeObject): Placed | undefined {
  return ofKind(ctx, 'ClientTrafficPolicy').find((p) => targets(p.object).some((t) => t.kind === 'Gateway' && t.name === gateway.metadata?.name));
}

/** The EnvoyProxy a Gateway names (its own `infrastructure.parametersRef`, else its GatewayClass's). */
export function envoyProxyFor(ctx: RuleContext, gateway: KubeObject): Placed | undefined {
  const spec = gateway.spec as { gatewayClassName: string; infrastructure?: { parametersRef?: { kind: string; name: string } } };
  const classRef = (ofKind(ctx, 'GatewayClass').find((c) => c.object.metadata?.name === spec.gatewayClassName)?.object.spec as { parametersRef?: { kind: string; name: string } } | undefined)?.parametersRef;
  const ref = spec.infrastructure?.parametersRef ?? classRef;
  if (ref?.kind !== 'EnvoyProxy') return undefined;
  return ofKind(ctx, 'EnvoyProxy').find((p) => p.object.metadata?.name === ref.name);
}

/** The controller of a Gateway's class, if the class is in the manifests. */
export function controllerOf(ctx: RuleContext, gateway: KubeObject): string | undefined {
  const className = (gateway.spec as { gatewayClassName: string }).gatewayClassName;
  return (ofKind(ctx, 'GatewayClass').find((c) => c.object.metadata?.name === className)?.object.spec as { controllerName?: string } | undefined)?.controllerName;
}
