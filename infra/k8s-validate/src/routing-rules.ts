/**
 * Rules for Services and the Ingress: selectors and ports resolve to real pods, and the spec's
 * stream paths reach the gateways (unbuffered, long timeouts) while everything else reaches the API.
 */
import { issueFor, ofKind, workloads, type RuleContext, type Rule } from './rule-context.ts';
import { API_PATH_SAMPLES, STREAM_PATH_SAMPLES, VIEWER_PATH_SAMPLES } from './service-catalog.ts';
import type { Issue, KubeObject } from './issue.ts';

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

interface Route {
  ingress: KubeObject;
  file: string;
  path: string;
  pathType: string;
  service: string;
  port: string | number | undefined;
}

function routesOf(ctx: RuleContext): { routes: Route[]; regex: boolean } {
  const routes: Route[] = [];
  let regex = false;
  for (const { file, object } of ofKind(ctx, 'Ingress')) {
    if (object.metadata?.annotations?.['nginx.ingress.kubernetes.io/use-regex'] === 'true') regex = true;
    type Path = { path?: string; pathType: string; backend: { service?: { name: string; port?: { name?: string; number?: number } } } };
    const rules = ((object.spec as { rules?: Array<{ http?: { paths: Path[] } }> }).rules ?? []);
    for (const rule of rules) {
      for (const p of rule.http?.paths ?? []) {
        const svc = p.backend.service;
        if (svc) routes.push({ ingress: object, file, path: p.path ?? '/', pathType: p.pathType, service: svc.name, port: svc.port?.name ?? svc.port?.number });
      }
    }
  }
  return { routes, regex };
}

/**
 * Which route ingress-nginx picks for a request path: with use-regex on the host every path is a
 * case-insensitive regex anchored at the start, tried longest first; otherwise Exact/Prefix rules.
 */
export function routeFor(routes: Route[], regex: boolean, requestPath: string): Route | undefined {
  const ordered = [...routes].sort((a, b) => b.path.length - a.path.length);
  return ordered.find((r) => {
    if (regex) return new RegExp(`^${r.path}`, 'i').test(requestPath);
    if (r.pathType === 'Exact') return requestPath === r.path;
    const prefix = r.path.endsWith('/') ? r.path : `${r.path}/`;
    return requestPath === r.path || requestPath.startsWith(prefix) || r.path === '/';
  });
}

function componentBehind(ctx: RuleContext, serviceName: string): string | undefined {
  const service = ofKind(ctx, 'Service').find((s) => s.object.metadata?.name === serviceName);
  if (!service) return undefined;
  const selected = podsSelectedBy(ctx, (service.object.spec as ServiceSpec).selector);
  return selected[0]?.podLabels['app.kubernetes.io/component'];
}

/** Ingress backends exist; stream paths go to the gateways unbuffered with ≥ 1 h timeouts, the viewer's paths to the viewer, the rest to the API. */
export const ingressRoutesStreams: Rule = (ctx) => {
  const { routes, regex } = routesOf(ctx);
  const issues: Issue[] = [];
  for (const r of routes) {
    const service = ofKind(ctx, 'Service').find((s) => s.object.metadata?.name === r.service);
    if (!service) issues.push(issueFor(r.file, r.ingress, `backend Service ${r.service} is not defined`));
    else if (!(service.object.spec as ServiceSpec).ports.some((p) => p.name === r.port || p.port === r.port)) {
      issues.push(issueFor(r.file, r.ingress, `backend Service ${r.service} has no port ${String(r.port)}`));
    }
  }
  for (const path of STREAM_PATH_SAMPLES) {
    const route = routeFor(routes, regex, path);
    if (!route || componentBehind(ctx, route.service) !== 'stream-gateway') {
      issues.push({ file: route?.file ?? '(ingress)', message: `${path} must route to the stream-gateway, routes to ${route?.service ?? 'nothing'}` });
      continue;
    }
    const a = route.ingress.metadata?.annotations ?? {};
    const long = (key: string) => Number(a[`nginx.ingress.kubernetes.io/${key}`]) >= 3600;
    if (a['nginx.ingress.kubernetes.io/proxy-buffering'] !== 'off' || !long('proxy-read-timeout') || !long('proxy-send-timeout')) {
      issues.push(issueFor(route.file, route.ingress, `${path}: stream routes need proxy-buffering "off" and proxy-read/send-timeout ≥ 3600`));
    }
  }
  for (const path of API_PATH_SAMPLES) {
    const route = routeFor(routes, regex, path);
    if (!route || componentBehind(ctx, route.service) !== 'api') {
      issues.push({ file: route?.file ?? '(ingress)', message: `${path} must route to the api, routes to ${route?.service ?? 'nothing'}` });
    }
  }
  for (const path of VIEWER_PATH_SAMPLES) {
    const route = routeFor(routes, regex, path);
    if (!route || componentBehind(ctx, route.service) !== 'viewer') {
      issues.push({ file: route?.file ?? '(ingress)', message: `${path} must route to the viewer, routes to ${route?.service ?? 'nothing'}` });
    }
  }
  return issues;
};
