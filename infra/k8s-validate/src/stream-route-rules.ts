/**
 * Rules for the routes that carry event streams: each stream's bytes pass the proxy as they come
 * (no request buffer, no compression, no bandwidth limit), its timeouts outlast the stream (the
 * gateway sends a heartbeat every GATEWAY_HEARTBEAT_MS and a `handoff` at its jittered
 * GATEWAY_MAX_STREAM_AGE_MS), and a failed stream is never retried by the proxy on another gateway.
 */
import { durationSeconds } from './custom-resource-schema.ts';
import { backendPolicyFor, clientPolicyFor, gateways, httpsRouteRules, ruleFor, type RouteRule } from './gateway-routes.ts';
import { DEFAULT_HEARTBEAT_MS, DEFAULT_MAX_STREAM_AGE_MS, MISSED_HEARTBEATS, STREAM_AGE_JITTER } from './ingress-catalog.ts';
import { containerEnv, issueFor, workloads, type Rule, type RuleContext } from './rule-context.ts';
import { specOperations } from './spec-operations.ts';
import type { Issue, KubeObject } from './issue.ts';

/** A stream gateway's setting as its container starts with it (ConfigMap and env), or the default. */
export function gatewaySetting(ctx: RuleContext, key: string, fallback: number): number {
  const gateway = workloads(ctx).find((w) => w.podLabels['app.kubernetes.io/component'] === 'stream-gateway');
  const value = gateway ? containerEnv(ctx, gateway.pod.containers[0]!).get(key) : undefined;
  return typeof value === 'string' && Number.isFinite(Number(value)) ? Number(value) : fallback;
}

/** The longest a stream lives before its `handoff`, in seconds. */
export function longestStreamSeconds(ctx: RuleContext): number {
  return (gatewaySetting(ctx, 'GATEWAY_MAX_STREAM_AGE_MS', DEFAULT_MAX_STREAM_AGE_MS) * (1 + STREAM_AGE_JITTER)) / 1000;
}

/** Each distinct route rule that serves a stream operation, with one path it serves, and the stream paths no rule serves. */
export function streamRouteRules(ctx: RuleContext): { rules: Array<{ path: string; rule: RouteRule }>; unrouted: string[] } {
  const routes = httpsRouteRules(ctx);
  const found = new Map<RouteRule, string>();
  const unrouted: string[] = [];
  for (const operation of (specOperations(ctx.repoRoot) ?? []).filter((o) => o.stream)) {
    const rule = ruleFor(routes, operation.path);
    if (rule) found.set(rule, found.get(rule) ?? operation.path);
    else unrouted.push(operation.path);
  }
  return { rules: [...found].map(([rule, path]) => ({ path, rule })), unrouted };
}

type Spec = Record<string, any>;
const specOf = (object: KubeObject | undefined): Spec => (object?.spec ?? {}) as Spec;

/**
 * A stream route passes bytes unbuffered and outlasts the stream: its request timeout is 0 (none)
 * or at least the longest stream life, and its stream idle timeout (its policy's, else the
 * listener's) is set and covers {@link MISSED_HEARTBEATS} heartbeats.
 */
export const streamRoutesHeld: Rule = (ctx) => {
  const { rules, unrouted } = streamRouteRules(ctx);
  const issues: Issue[] = unrouted.map((path) => ({ file: '(routes)', message: `stream path ${path} is served by no HTTPRoute of the Gateway: nothing holds it unbuffered with timeouts that outlast it` }));
  const longest = longestStreamSeconds(ctx);
  const heartbeat = gatewaySetting(ctx, 'GATEWAY_HEARTBEAT_MS', DEFAULT_HEARTBEAT_MS) / 1000;
  const gateway = gateways(ctx)[0]?.object;
  const listenerIdle = specOf(gateway && clientPolicyFor(ctx, gateway)?.object).timeout?.http?.streamIdleTimeout;
  for (const { path, rule } of rules) {
    const say = (message: string) => issues.push(issueFor(rule.file, rule.route, `${path}: ${message}`));
    const policy = backendPolicyFor(ctx, rule.route);
    if (!policy) {
      say('no BackendTrafficPolicy applies to the stream route: its idle timeout, retries and refusals are left to defaults');
      continue;
    }
    const spec = specOf(policy.object);
    for (const field of ['requestBuffer', 'compression', 'compressor', 'bandwidthLimit'] as const) {
      if (spec[field] !== undefined) say(`BackendTrafficPolicy ${policy.object.metadata?.name} sets ${field}, which holds or reshapes the stream's bytes: events must reach the client as they come`);
    }
    for (const [name, value] of [
      ['timeouts.request', rule.rule.timeouts?.request ?? spec.timeout?.http?.requestTimeout],
      ['timeouts.backendRequest', rule.rule.timeouts?.backendRequest],
    ] as const) {
      if (value === undefined && name === 'timeouts.backendRequest') continue;
      const seconds = durationSeconds(value);
      if (seconds === undefined) say(`${name} is unset, so Envoy's route timeout (15 s) cuts every stream: set it at or above the longest stream life (${longest} s) or 0s`);
      else if (seconds !== 0 && seconds < longest) say(`${name} ${String(value)} cuts a stream before its handoff (streams live up to ${longest} s): set it at or above that, or 0s`);
    }
    const idleValue = spec.timeout?.http?.streamIdleTimeout ?? listenerIdle;
    const idle = durationSeconds(idleValue);
    if (idle === undefined) say('its stream idle timeout is unset (neither the route\'s BackendTrafficPolicy nor the ClientTrafficPolicy sets streamIdleTimeout)');
    else if (idle !== 0 && idle < heartbeat * MISSED_HEARTBEATS) say(`stream idle timeout ${String(idleValue)} is under ${MISSED_HEARTBEATS} heartbeats (${heartbeat} s each): a healthy stream would be cut`);
  }
  return issues;
};

/** No stream is retried by the proxy: no HTTPRoute retry, and the route's policy sets `retry.numRetries: 0`. */
export const streamRoutesNotRetried: Rule = (ctx) => {
  const { rules, unrouted } = streamRouteRules(ctx);
  const issues: Issue[] = unrouted.map((path) => ({ file: '(routes)', message: `stream path ${path} is served by no HTTPRoute of the Gateway: no BackendTrafficPolicy keeps the proxy from retrying it` }));
  for (const { path, rule } of rules) {
    const say = (message: string) => issues.push(issueFor(rule.file, rule.route, `${path}: ${message}`));
    if ((rule.rule.retry?.attempts ?? 0) > 0) say('the HTTPRoute rule retries: a failed stream would be replayed to another gateway, while the client resumes with Last-Event-ID itself');
    const retry = specOf(backendPolicyFor(ctx, rule.route)?.object).retry as { numRetries?: number } | undefined;
    if (retry?.numRetries !== 0) {
      say(`the route's BackendTrafficPolicy must set retry.numRetries 0 (has ${retry === undefined ? 'no retry' : `numRetries ${String(retry.numRetries ?? 'unset: 2')}`}): a failed stream must reach the client, which resumes with Last-Event-ID and its own backoff`);
    }
  }
  return issues;
};
