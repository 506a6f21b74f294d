/**
 * Rules for what the ingress answers by itself: every refusal ingress-nginx can make for the
 * deployment's host reaches the client in the spec's envelope with an X-Request-Id (through the
 * `ingress-errors` backend), and no answer of the services is replaced on the way.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configData, issueFor, ofKind, workloads, type Rule, type RuleContext } from './rule-context.ts';
import type { Issue, KubeObject } from './issue.ts';

const ANNOTATION = 'nginx.ingress.kubernetes.io/';

/** How a refusal of ingress-nginx reaches the client. */
export type RefusalRoute =
  /** Listed in `custom-http-errors`: the ingress asks the error backend for the answer. */
  | 'custom-http-errors'
  /** The ingress sends the request itself to the `default-backend` Service. */
  | 'default-backend'
  /** The shipped manifests never make the ingress answer it. */
  | 'not-produced'
  /** Made while nginx reads the request head, before any Ingress annotation applies: the controller's own settings, outside these manifests. */
  | 'controller';

/**
 * Every status ingress-nginx answers by itself for a request to the host, and why it is routed as
 * it is. A status missing here is a refusal nobody decided on: the test on this table fails.
 */
export const INGRESS_REFUSALS: Readonly<Record<number, { route: RefusalRoute; why: string }>> = {
  400: { route: 'controller', why: "a malformed request line, or headers beyond the controller's large-client-header-buffers; listing 400 would also replace the services' own 400s" },
  408: { route: 'not-produced', why: 'a client too slow to send its request: nginx closes the connection without an answer' },
  413: { route: 'custom-http-errors', why: 'a body above proxy-body-size' },
  414: { route: 'controller', why: "a request line beyond the controller's large-client-header-buffers (no spec path or cursor comes near it)" },
  429: { route: 'not-produced', why: 'only limit-* annotations make the ingress refuse with 429 (or 503), and none is allowed' },
  502: { route: 'custom-http-errors', why: 'the upstream pod refused or reset the connection (killed, restarting)' },
  503: { route: 'default-backend', why: "the routed Service has no ready endpoint; listing 503 would replace the services' own 503s and their codes" },
  504: { route: 'custom-http-errors', why: 'the upstream did not answer within proxy-read-timeout' },
};

/** Where the services' statuses are declared, relative to the repository root. */
export const OPENAPI_DOCUMENT = 'clients/contracts/openapi.json';

/** The component whose pods answer the ingress's refusals in the envelope. */
export const ENVELOPE_BACKEND_COMPONENT = 'ingress-errors';

/**
 * Statuses the services answer themselves: every error status the committed OpenAPI document
 * declares, plus 404 and 405 for paths and methods that are no operation. The ingress must pass
 * them through untouched (ingress-nginx replaces an upstream answer whose status is listed in
 * `custom-http-errors`).
 */
export function serviceStatuses(repoRoot: string): Set<number> | undefined {
  const path = join(repoRoot, OPENAPI_DOCUMENT);
  if (!existsSync(path)) return undefined;
  const document = JSON.parse(readFileSync(path, 'utf8')) as {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  };
  const statuses = new Set([404, 405]);
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      for (const status of Object.keys(operation.responses ?? {})) if (Number(status) >= 400) statuses.add(Number(status));
    }
  }
  return statuses;
}

/** An nginx size (`1m`, `512k`, `1048576`) in bytes; undefined when it is not one, 0 when unlimited. */
export function nginxSizeBytes(value: string | undefined): number | undefined {
  const match = /^(\d+)([kKmMgG]?)$/.exec(value?.trim() ?? '');
  if (!match) return undefined;
  const unit = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[match[2]!.toLowerCase() as '' | 'k' | 'm' | 'g'];
  return Number(match[1]) * unit;
}

function backendComponent(ctx: RuleContext, serviceName: string | undefined): string | undefined {
  const service = ofKind(ctx, 'Service').find((s) => s.object.metadata?.name === serviceName);
  const selector = (service?.object.spec as { selector?: Record<string, string> } | undefined)?.selector;
  if (!selector || Object.keys(selector).length === 0) return undefined;
  const pods = workloads(ctx).find(({ object, podLabels }) => object.kind === 'Deployment' && Object.entries(selector).every(([k, v]) => podLabels[k] === v));
  return pods?.podLabels['app.kubernetes.io/component'];
}

function checkIngress(ctx: RuleContext, file: string, ingress: KubeObject, apiLimit: number, services: Set<number>): Issue[] {
  const a = ingress.metadata?.annotations ?? {};
  const issues: Issue[] = [];
  const say = (message: string) => issues.push(issueFor(file, ingress, message));

  const bodySize = nginxSizeBytes(a[`${ANNOTATION}proxy-body-size`]);
  if (bodySize === undefined) say(`needs ${ANNOTATION}proxy-body-size (a size above API_BODY_LIMIT_BYTES ${apiLimit})`);
  else if (bodySize === 0) say('proxy-body-size 0 (unlimited) lets nginx buffer bodies of any size: set a size above API_BODY_LIMIT_BYTES');
  else if (bodySize <= apiLimit) say(`proxy-body-size (${bodySize} bytes) must be above API_BODY_LIMIT_BYTES (${apiLimit}), or a body the API would answer itself gets nginx's 413`);

  const listed = new Set((a[`${ANNOTATION}custom-http-errors`] ?? '').split(',').map((s) => s.trim()).filter(Boolean).map(Number));
  for (const [status, { route }] of Object.entries(INGRESS_REFUSALS)) {
    if (route === 'custom-http-errors' && !listed.has(Number(status))) say(`custom-http-errors must list ${status} (the ingress's own ${status} would reach the client as an HTML page)`);
  }
  for (const status of listed) {
    if (services.has(status)) say(`custom-http-errors lists ${status}, which the services answer themselves: the ingress would replace their envelope (code, Retry-After, request ID)`);
  }

  const backend = a[`${ANNOTATION}default-backend`];
  if (backendComponent(ctx, backend) !== ENVELOPE_BACKEND_COMPONENT) {
    say(`default-backend must name the Service of the ${ENVELOPE_BACKEND_COMPONENT} pods (it answers refusals and Services without ready endpoints in the envelope), names ${backend ?? 'nothing'}`);
  }

  for (const key of Object.keys(a)) {
    const name = key.startsWith(ANNOTATION) ? key.slice(ANNOTATION.length) : '';
    if (name.startsWith('limit-') || name.startsWith('global-rate-limit')) say(`${key}: the ingress's own rate limiting answers 429/503 that cannot reach the envelope backend without replacing the services' own`);
  }
  return issues;
}

/**
 * Every Ingress passes bodies the API may accept (`proxy-body-size` above API_BODY_LIMIT_BYTES),
 * sends each refusal of its own to the envelope backend (`custom-http-errors` and `default-backend`,
 * per {@link INGRESS_REFUSALS}), never lists a status the services answer, and limits no rate itself.
 */
export const ingressRefusalsEnveloped: Rule = (ctx) => {
  const apiLimit = Number(configData(ctx).API_BODY_LIMIT_BYTES);
  const ingresses = ofKind(ctx, 'Ingress');
  if (!Number.isSafeInteger(apiLimit) || apiLimit <= 0) {
    return ingresses.length === 0 ? [] : [{ file: '(config)', message: 'ConfigMap must set API_BODY_LIMIT_BYTES (the body-size annotations are checked against it)' }];
  }
  const services = serviceStatuses(ctx.repoRoot);
  if (!services) return [{ file: '(contracts)', message: `${OPENAPI_DOCUMENT} is missing: the statuses the services answer cannot be read` }];
  return ingresses.flatMap(({ file, object }) => checkIngress(ctx, file, object, apiLimit, services));
};
