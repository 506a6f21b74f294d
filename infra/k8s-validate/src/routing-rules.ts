/**
 * Rules for Services and routes: selectors and ports resolve to real pods, and the Gateway API
 * routes send the spec's stream paths to the gateways, the viewer's paths to the viewer and
 * everything else to the API.
 */
import { componentsOf, httpsRouteRules, ruleFor, type RouteRule } from './gateway-routes.ts';
import { issueFor, ofKind, workloads, type RuleContext, type Rule } from './rule-context.ts';
import { API_PATH_SAMPLES, VIEWER_PATH_SAMPLES } from './service-catalog.ts';
import { OPENAPI_DOCUMENT, specOperations } from './spec-operations.ts';
import { describe, type Issue } from './issue.ts';

interface ServiceSpec {
  selector?: Record<string, string>;
  ports: Array<{ name?: string; port: number; targetPort?: number | string }>;
}

function podsSelectedBy(ctx: RuleContext, selector: Record<string, string> | undefined) {
  if (!selector || Object.keys(selector).length === 0) return [];
  return workloads(ctx).filter(({ object, podLabels }) => object.kind === 'Deployment' && Object.entries(selector).every(([k, v]) => podLabels[k] === v));
}

/** A Service selects at least one Deployment's pods, and each named targetPort is a port of those pods. */
export const servicesResolve: Rule = (ctx) =>
  ofKind(ctx, 'Service').flatMap(({ file, object }) => {
    const spec = object.spec as ServiceSpec;
    const selected = podsSelectedBy(ctx, spec.selector);
    if (selected.length === 0) return [issueFor(file, object, 'its selector matches no Deployment pods')];
    return spec.ports.flatMap((p) =>
      typeof p.targetPort === 'string'
        ? selected
            .filter(({ pod }) => !pod.containers.some((c) => c.ports?.some((cp) => cp.name === p.targetPort)))
            .map(({ object: d }) => issueFor(file, object, `targetPort ${p.targetPort} is not a port of ${d.metadata?.name}'s pods`))
        : [],
    );
  });

/** Resolves each Service a route sends to: it exists and has the port the route names. */
function backendIssues(ctx: RuleContext, rules: RouteRule[]): Issue[] {
  return rules.flatMap(({ file, route, rule }) =>
    (rule.backendRefs ?? []).flatMap((b) => {
      const service = ofKind(ctx, 'Service').find((s) => s.object.metadata?.name === b.name);
      if (!service) return [issueFor(file, route, `backend Service ${b.name} is not defined`)];
      return (service.object.spec as ServiceSpec).ports.some((p) => p.port === b.port) ? [] : [issueFor(file, route, `backend Service ${b.name} has no port ${String(b.port)}`)];
    }),
  );
}

/**
 * The HTTPRoutes of the Gateway's HTTPS listener send every spec operation where it is served: the
 * text/event-stream operations of the OpenAPI document to the stream gateways, every other one
 * (and paths that are no operation) to the API, the web viewer's paths to the viewer.
 */
export const routesServeTheSpec: Rule = (ctx) => {
  const rules = httpsRouteRules(ctx);
  const operations = specOperations(ctx.repoRoot);
  if (!operations) return [{ file: '(contracts)', message: `${OPENAPI_DOCUMENT} is missing: the paths to route cannot be read` }];
  const expected = [
    ...operations.map((o) => ({ path: o.path, component: o.stream ? 'stream-gateway' : 'api' })),
    ...API_PATH_SAMPLES.map((path) => ({ path, component: 'api' })),
    ...VIEWER_PATH_SAMPLES.map((path) => ({ path, component: 'viewer' })),
  ];
  const seen = new Set<string>();
  const issues = backendIssues(ctx, rules);
  for (const { path, component } of expected) {
    if (seen.has(path)) continue;
    seen.add(path);
    const rule = ruleFor(rules, path);
    const reached = rule ? componentsOf(ctx, rule) : [];
    if (reached.length === 0 || reached.some((c) => c !== component)) {
      issues.push({ file: rule?.file ?? '(routes)', ...(rule ? { object: describe(rule.route) } : {}), message: `${path} must route to the ${component}, routes to ${reached.join(', ') || 'nothing'}` });
    }
  }
  return issues;
};
