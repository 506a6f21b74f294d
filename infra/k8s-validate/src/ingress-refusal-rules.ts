/**
 * Rules for what the proxy answers by itself: every refusal Envoy makes for a routed request reaches
 * the client in the spec's envelope with its X-Request-Id (a `responseOverride` of the route's
 * BackendTrafficPolicy, limited to Envoy's own answers), no answer of a service is replaced on the
 * way, and bodies the API may accept pass.
 */
import { backendPolicyFor, httpsRouteRules, ruleFor, type Placed } from './gateway-routes.ts';
import { REQUEST_ID_OPERATOR } from './ingress-catalog.ts';
import { configData, issueFor, ofKind, type Rule } from './rule-context.ts';
import { OPENAPI_DOCUMENT, specOperations, type SpecOperation } from './spec-operations.ts';
import type { Issue, KubeObject } from './issue.ts';

/** How a refusal Envoy makes itself reaches the client. */
export type RefusalRoute =
  /** Rewritten by the route's `responseOverride` into the status and code given. */
  | 'override'
  /** The shipped manifests never make the proxy answer it. */
  | 'not-produced'
  /** Made while Envoy reads the request head, before any route (and so any override) applies. */
  | 'listener';

interface Refusal {
  route: RefusalRoute;
  why: string;
  /** For `override`: the status the client gets, and its code on stream routes and elsewhere. */
  answer?: { status: number; stream: string; other: string; retryAfter: boolean };
}

const REFUSED = { status: 400, stream: 'REQUEST_INVALID', other: 'REQUEST_INVALID', retryAfter: false };
const UNAVAILABLE = { status: 503, stream: 'STREAM_UNAVAILABLE', other: 'STORE_UNAVAILABLE', retryAfter: true };

/**
 * Every status Envoy answers by itself for a request to the host, and why it is routed as it is. A
 * status missing here is a refusal nobody decided on: the test on this table fails.
 */
export const PROXY_REFUSALS: Readonly<Record<number, Refusal>> = {
  400: { route: 'listener', why: "a malformed request head, refused by Envoy's HTTP codec before routing; overriding 400 would also replace the services' own 400s" },
  404: { route: 'not-produced', why: 'every path of the host is routed (the API takes the rest); another host on the listener is no request of this deployment' },
  408: { route: 'override', why: "the request's head or body did not arrive within the ClientTrafficPolicy's timeouts", answer: REFUSED },
  413: { route: 'override', why: 'a body above the route\'s requestBuffer.limit', answer: REFUSED },
  429: { route: 'not-produced', why: 'only a rateLimit policy makes Envoy refuse with 429, and none is allowed' },
  431: { route: 'listener', why: "request headers above Envoy's limit (60 KiB), refused by the codec before routing; real tokens and cursors stay far below it" },
  502: { route: 'override', why: 'the gateway or API pod answered with something that is no HTTP response', answer: UNAVAILABLE },
  503: { route: 'override', why: "no ready endpoint, a refused or reset connection (a pod killed or restarting), or the route's circuit breaker full", answer: UNAVAILABLE },
  504: { route: 'override', why: "no answer within the route's request timeout", answer: UNAVAILABLE },
};

/** Keys of the envelope (`{ error: { code, message, requestId } }`), all required, no others. */
const ENVELOPE_KEYS = ['code', 'message', 'requestId'];

interface OverrideRule {
  match?: { statusCodes?: Array<{ type?: string; value?: number; range?: { start: number; end: number } }> };
  source?: string;
  response?: { statusCode?: number; contentType?: string; body?: { type?: string; inline?: string }; header?: { set?: Array<{ name: string; value: string }> } };
}

function matchesStatus(rule: OverrideRule, status: number): boolean {
  return (rule.match?.statusCodes ?? []).some((m) => (m.type === 'Range' ? m.range !== undefined && status >= m.range.start && status <= m.range.end : m.value === status));
}

/** What a client gets from a response override for a request whose X-Request-Id is `requestId`. */
function renderOverride(rule: OverrideRule, requestId: string): { status?: number; headers: Map<string, string>; body: unknown } {
  const headers = new Map((rule.response?.header?.set ?? []).map((h) => [h.name.toLowerCase(), h.value.replaceAll(REQUEST_ID_OPERATOR, requestId)]));
  if (rule.response?.contentType) headers.set('content-type', rule.response.contentType);
  let body: unknown;
  try {
    body = JSON.parse((rule.response?.body?.inline ?? '').replaceAll(REQUEST_ID_OPERATOR, requestId));
  } catch {
    body = undefined;
  }
  return { status: rule.response?.statusCode, headers, body };
}

function envelopeProblem(body: unknown, code: string, requestId: string): string | undefined {
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'error' || typeof error !== 'object' || error === null) return 'its body is not the envelope { error: { code, message, requestId } }';
  if (Object.keys(error).sort().join() !== ENVELOPE_KEYS.join()) return `its envelope must hold exactly ${ENVELOPE_KEYS.join(', ')}`;
  if (error.code !== code) return `its code must be ${code}, is ${String(error.code)}`;
  if (error.requestId !== requestId || typeof error.message !== 'string' || error.message === '') return `its requestId must be ${REQUEST_ID_OPERATOR} and its message a sentence`;
  return undefined;
}

function checkOverrides(policy: Placed, stream: boolean, operations: SpecOperation[], say: (m: string) => void): void {
  const rules = ((policy.object.spec as { responseOverride?: OverrideRule[] }).responseOverride ?? []);
  for (const rule of rules) {
    if (rule.source !== 'Local') say(`a responseOverride with source ${rule.source ?? 'unset (All)'} would replace the services' own answers (their code, Retry-After and request ID): set source Local`);
  }
  const requestId = 'req-01JGFJJZ00QNYBVPQTAT49MN0F';
  for (const [status, { route, answer }] of Object.entries(PROXY_REFUSALS)) {
    if (route !== 'override' || !answer) continue;
    const rule = rules.find((r) => r.source === 'Local' && matchesStatus(r, Number(status)));
    if (!rule) {
      say(`no responseOverride (source Local) answers Envoy's own ${status}: the client would get Envoy's plain-text page`);
      continue;
    }
    const code = stream ? answer.stream : answer.other;
    const got = renderOverride(rule, requestId);
    const problems = [
      got.status !== answer.status && `its status must be ${answer.status}, is ${String(got.status)}`,
      got.headers.get('content-type') !== 'application/json' && 'its contentType must be application/json',
      got.headers.get('x-request-id') !== requestId && `it must set X-Request-Id to ${REQUEST_ID_OPERATOR}`,
      got.headers.get('cache-control') !== 'no-store' && 'it must set Cache-Control no-store',
      answer.retryAfter && !/^[1-9][0-9]*$/.test(got.headers.get('retry-after') ?? '') && 'it must set Retry-After (seconds)',
      envelopeProblem(got.body, code, requestId),
      ...operations.filter((o) => !o.statuses.has(answer.status)).map((o) => `${o.method} ${o.template} declares no ${answer.status}`),
    ].filter((p): p is string => typeof p === 'string');
    if (problems.length > 0) say(`the answer to Envoy's own ${status}: ${problems.join('; ')}`);
  }
}

/**
 * Every routed spec operation's route has a BackendTrafficPolicy whose `responseOverride` (source
 * Local) answers each `override` refusal of {@link PROXY_REFUSALS} in the envelope, with a status the
 * operation declares; no policy limits rates; and the route that takes bodies buffers at most a
 * limit above API_BODY_LIMIT_BYTES.
 */
export const refusalsEnveloped: Rule = (ctx) => {
  const operations = specOperations(ctx.repoRoot);
  if (!operations) return [{ file: '(contracts)', message: `${OPENAPI_DOCUMENT} is missing: the statuses the services answer cannot be read` }];
  const rules = httpsRouteRules(ctx);
  const issues: Issue[] = [];
  const byRoute = new Map<KubeObject, { file: string; operations: SpecOperation[] }>();
  for (const operation of operations) {
    const rule = ruleFor(rules, operation.path);
    if (!rule) {
      issues.push({ file: '(routes)', message: `${operation.method} ${operation.path}: served by no HTTPRoute, so nothing answers the proxy's own refusals for it in the envelope` });
      continue;
    }
    const entry = byRoute.get(rule.route) ?? { file: rule.file, operations: [] };
    entry.operations.push(operation);
    byRoute.set(rule.route, entry);
  }
  const apiLimit = Number(configData(ctx).API_BODY_LIMIT_BYTES);
  for (const [route, { file, operations: served }] of byRoute) {
    const say = (message: string) => issues.push(issueFor(file, route, message));
    const policy = backendPolicyFor(ctx, route);
    if (!policy) {
      say("no BackendTrafficPolicy applies: Envoy's own refusals would reach clients as plain-text pages");
      continue;
    }
    checkOverrides(policy, served.some((o) => o.stream), served, (m) => say(`BackendTrafficPolicy ${policy.object.metadata?.name}: ${m}`));
    if (served.some((o) => o.method === 'POST')) {
      const limit = quantityBytes((policy.object.spec as { requestBuffer?: { limit?: string } }).requestBuffer?.limit);
      if (!Number.isSafeInteger(apiLimit) || apiLimit <= 0) say('ConfigMap must set API_BODY_LIMIT_BYTES (the proxy\'s body limit is checked against it)');
      else if (limit === undefined) say(`BackendTrafficPolicy ${policy.object.metadata?.name} needs requestBuffer.limit above API_BODY_LIMIT_BYTES (${apiLimit}): the route takes bodies`);
      else if (limit <= apiLimit) say(`requestBuffer.limit (${limit} bytes) must be above API_BODY_LIMIT_BYTES (${apiLimit}), or a body the API would answer itself gets the proxy's 413`);
    }
  }
  for (const { file, object } of ofKind(ctx, 'BackendTrafficPolicy')) {
    if ((object.spec as { rateLimit?: unknown }).rateLimit !== undefined) issues.push(issueFor(file, object, "rateLimit: the proxy's own 429s could not be told from the services' (rate limits are the API's and the stream caps')"));
  }
  return issues;
};

/** A Kubernetes quantity of bytes (`1Mi`, `512Ki`, `1048576`); undefined when it is not one. */
export function quantityBytes(value: string | undefined): number | undefined {
  const match = /^([0-9]+)(Ki|Mi|Gi|k|M|G)?$/.exec(value?.trim() ?? '');
  if (!match) return undefined;
  const unit = { '': 1, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, k: 1e3, M: 1e6, G: 1e9 }[match[2] ?? ''] ?? 1;
  return Number(match[1]) * unit;
}
