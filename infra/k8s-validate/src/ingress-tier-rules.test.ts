import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { durationSeconds } from './custom-resource-schema.ts';
import { ruleFor, type RouteRule } from './gateway-routes.ts';
import { formatIssue, type ManifestDocument } from './issue.ts';
import { committedDocuments, REPO_ROOT, withChange } from './test-support.ts';
import { validateDocuments, validateManifestDirectory } from './validate-manifests.ts';

const messages = (docs: ManifestDocument[]) => validateDocuments(docs, REPO_ROOT).map(formatIssue);
/** infra/k8s with ingress-nginx, before the Gateway API tier: each rule must fail on it. */
const BEFORE = fileURLToPath(new URL('../fixtures/k8s-before', import.meta.url));
const ROOM_STREAM = '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room/events';
const STREAM_ROUTE = 'ingress-routes.yaml HTTPRoute/repo-chat-streams';
/** The stream route's messages name the first stream path of the OpenAPI document it serves. */
const FIRST_STREAM = '/v1/inbox/events';
const PROXY = 'ingress-gateway.yaml EnvoyProxy/repo-chat-proxy';

describe('ingress tier rules (Gateway API, keep-alive ordering, sizing, drain)', () => {
  let docs: ManifestDocument[];
  let beforeIssues: string[];
  before(async () => {
    docs = await committedDocuments();
    beforeIssues = (await validateManifestDirectory(BEFORE, REPO_ROOT)).issues.map(formatIssue);
  });

  it('accepts the committed manifests', () => {
    expect(messages(docs)).to.deep.equal([]);
  });

  describe('each fails on the manifests before them', () => {
    it('no retired controller: every ingress-nginx Ingress, and no Gateway', () => {
      for (const name of ['repo-chat-streams', 'repo-chat-api', 'repo-chat-viewer']) {
        expect(beforeIssues).to.include(`ingress.yaml Ingress/${name}: an Ingress (nginx): ingress-nginx is retired upstream and every reload (any Ingress or certificate change) cuts every open stream at worker-shutdown-timeout; route through the Gateway API (HTTPRoute) instead`);
      }
      expect(beforeIssues).to.include('(ingress): expected one Gateway (gateway.networking.k8s.io), found 0: the streams need a Gateway API proxy tier');
    });

    it('routing: the principal inbox stream went to the API, and no stream path is held by a route', () => {
      expect(beforeIssues).to.include('(routes): /v1/inbox/events must route to the stream-gateway, routes to nothing');
      expect(beforeIssues).to.include(`(routes): stream path ${ROOM_STREAM} is served by no HTTPRoute of the Gateway: nothing holds it unbuffered with timeouts that outlast it`);
    });

    it('retries: nothing states that the proxy never retries a stream', () => {
      expect(beforeIssues).to.include(`(routes): stream path ${ROOM_STREAM} is served by no HTTPRoute of the Gateway: no BackendTrafficPolicy keeps the proxy from retrying it`);
    });

    it("keep-alive ordering: the services' 5 s against ingress-nginx's 60 s", () => {
      expect(beforeIssues).to.include(
        "ingress.yaml Ingress/repo-chat-api: api closes idle connections after HTTP_KEEP_ALIVE_TIMEOUT_MS 5000 ms, but the proxy keeps them 60000 ms (ingress-nginx's upstream-keepalive-timeout (60 s)): the service must wait at least 65000 ms, so the proxy always closes first",
      );
    });

    it('sizing and drain: no proxy tier whose connections and drain are set', () => {
      expect(beforeIssues).to.include.members([
        "(ingress): expected one Gateway (gateway.networking.k8s.io), found 0: nothing sizes the proxies' connections (each stream holds 2: the client's and the upstream one)",
        '(ingress): expected one Gateway (gateway.networking.k8s.io), found 0: nothing drains the proxies: a stopping ingress-nginx pod cuts its streams at worker-shutdown-timeout',
      ]);
    });
  });

  it('refuses another controller, and any Ingress beside the Gateway', () => {
    const other = withChange(docs, 'GatewayClass', 'repo-chat', (c) => {
      c.spec.controllerName = 'k8s.io/ingress-nginx';
    });
    expect(messages(other)).to.include('ingress-gateway.yaml Gateway/repo-chat: its GatewayClass must be one of these manifests with controllerName gateway.envoyproxy.io/gatewayclass-controller (xDS updates without reloads, draining proxy pods), has k8s.io/ingress-nginx');
  });

  it('routes each path as Envoy Gateway does: Exact, then whole-path regular expressions, then the longest prefix', () => {
    const rule = (type: string, value: string, name: string): RouteRule => ({ file: 'f', route: { metadata: { name } }, rule: { matches: [{ path: { type, value } }] } });
    const rules = [rule('PathPrefix', '/', 'api'), rule('RegularExpression', '/v1/repositories/[^/]+/room/events', 'streams'), rule('PathPrefix', '/assets/', 'viewer'), rule('Exact', '/', 'page')];
    const routed = (path: string) => ruleFor(rules, path)?.route.metadata?.name;
    expect([routed(ROOM_STREAM), routed(`${ROOM_STREAM}/extra`), routed('/assets/a.js'), routed('/assets'), routed('/assetsx'), routed('/'), routed('/v1/inbox')]).to.deep.equal(['streams', 'api', 'viewer', 'viewer', 'api', 'page', 'api']);
  });

  it('refuses a stream path sent to the API, and a backend that does not resolve', () => {
    const changed = withChange(docs, 'HTTPRoute', 'repo-chat-streams', (r) => {
      r.spec.rules[0].matches.pop();
      r.spec.rules[0].backendRefs[0].port = 8080;
    });
    const found = messages(changed);
    expect(found).to.include('ingress-routes.yaml HTTPRoute/repo-chat-api: /v1/inbox/events must route to the stream-gateway, routes to api');
    expect(found).to.include(`${STREAM_ROUTE}: backend Service stream-gateway has no port 8080`);
  });

  it('refuses a stream route that buffers, times out before its handoff or under its heartbeats', () => {
    const changed = withChange(docs, 'HTTPRoute', 'repo-chat-streams', (r) => {
      r.spec.rules[0].timeouts.request = '30m';
    });
    expect(messages(changed)).to.include(`${STREAM_ROUTE}: ${FIRST_STREAM}: timeouts.request 30m cuts a stream before its handoff (streams live up to 2160 s): set it at or above that, or 0s`);
    const unset = withChange(docs, 'HTTPRoute', 'repo-chat-streams', (r) => {
      delete r.spec.rules[0].timeouts;
    });
    expect(messages(unset)).to.include(`${STREAM_ROUTE}: ${FIRST_STREAM}: timeouts.request is unset, so Envoy's route timeout (15 s) cuts every stream: set it at or above the longest stream life (2160 s) or 0s`);
    const policy = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-streams', (p) => {
      p.spec.requestBuffer = { limit: '1Mi' };
      p.spec.timeout.http.streamIdleTimeout = '20s';
    });
    expect(messages(policy)).to.include.members([
      `${STREAM_ROUTE}: ${FIRST_STREAM}: BackendTrafficPolicy repo-chat-streams sets requestBuffer, which holds or reshapes the stream's bytes: events must reach the client as they come`,
      `${STREAM_ROUTE}: ${FIRST_STREAM}: stream idle timeout 20s is under 2 heartbeats (15 s each): a healthy stream would be cut`,
    ]);
  });

  it('refuses a stream route the proxy may retry', () => {
    const changed = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-streams', (p) => {
      p.spec.retry = { numRetries: 2 };
    });
    expect(messages(changed)).to.include(
      `${STREAM_ROUTE}: ${FIRST_STREAM}: the route's BackendTrafficPolicy must set retry.numRetries 0 (has numRetries 2): a failed stream must reach the client, which resumes with Last-Event-ID and its own backoff`,
    );
    const route = withChange(docs, 'HTTPRoute', 'repo-chat-streams', (r) => {
      r.spec.rules[0].retry = { attempts: 1 };
    });
    expect(messages(route)).to.include(`${STREAM_ROUTE}: ${FIRST_STREAM}: the HTTPRoute rule retries: a failed stream would be replayed to another gateway, while the client resumes with Last-Event-ID itself`);
  });

  it('refuses a service that closes idle connections before the proxy does', () => {
    const config = withChange(docs, 'ConfigMap', 'repo-chat-config', (c) => {
      c.data.HTTP_KEEP_ALIVE_TIMEOUT_MS = '60000';
    });
    expect(messages(config)).to.include(
      'ingress-routes.yaml HTTPRoute/repo-chat-api: api closes idle connections after HTTP_KEEP_ALIVE_TIMEOUT_MS 60000 ms, but the proxy keeps them 60000 ms (BackendTrafficPolicy repo-chat-requests connectionIdleTimeout): the service must wait at least 65000 ms, so the proxy always closes first',
    );
    const proxy = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-streams', (p) => {
      delete p.spec.timeout.http.connectionIdleTimeout;
    });
    expect(messages(proxy)).to.include(
      `${STREAM_ROUTE}: stream-gateway closes idle connections after HTTP_KEEP_ALIVE_TIMEOUT_MS 75000 ms, but the proxy keeps them 3600000 ms (Envoy Gateway's default connectionIdleTimeout (3600 s)): the service must wait at least 3605000 ms, so the proxy always closes first`,
    );
  });

  it('refuses proxy connections that do not follow docs/capacity.md', () => {
    const breaker = withChange(docs, 'BackendTrafficPolicy', 'repo-chat-streams', (p) => {
      delete p.spec.circuitBreaker;
    });
    expect(messages(breaker)).to.include(`${STREAM_ROUTE}: the stream route's circuitBreaker.maxConnections 1024 is below the proxy pod's 25000 client connections: each stream holds one gateway connection, and the 1025th would be refused`);
    const target = withChange(docs, 'EnvoyProxy', 'repo-chat-proxy', (p) => {
      p.spec.provider.kubernetes.envoyHpa.metrics[0].pods.target.averageValue = '23k';
      p.spec.provider.kubernetes.envoyHpa.maxReplicas = 40;
    });
    expect(messages(target)).to.include.members([
      `${PROXY}: target 23000 connections per proxy pod leaves no headroom: the autoscaler acts only past 25300, at or above the connection limit 25000`,
      `${PROXY}: envoyHpa.maxReplicas 40 holds 920000 streams at the target; docs/capacity.md's 1000000 plus 10 % needs 48`,
      'docs/capacity.md: must state "48 proxy pods" (1,000,000 streams × 2 connections; pods at 23,000 connections each plus 10 %)',
    ]);
    const cpuOnly = withChange(docs, 'EnvoyProxy', 'repo-chat-proxy', (p) => {
      p.spec.provider.kubernetes.envoyHpa.metrics.shift();
    });
    expect(messages(cpuOnly)).to.include(`${PROXY}: the proxies' envoyHpa must scale on the Pods metric envoy_server_total_connections with an AverageValue target: CPU alone leaves idle streams' pods at their cap`);
    const unbounded = withChange(docs, 'ClientTrafficPolicy', 'repo-chat-clients', (p) => {
      delete p.spec.connection;
    });
    expect(messages(unbounded)).to.include("ingress-gateway.yaml Gateway/repo-chat: no ClientTrafficPolicy sets connection.connectionLimit.value: a proxy pod's client connections are unbounded");
  });

  it('refuses proxy pods that drain for less than a stream lives, or without the stream holders\' priority', () => {
    const changed = withChange(docs, 'EnvoyProxy', 'repo-chat-proxy', (p) => {
      p.spec.shutdown.drainTimeout = '60s';
      delete p.spec.provider.kubernetes.envoyDeployment.pod.priorityClassName;
    });
    expect(messages(changed)).to.include.members([
      `${PROXY}: shutdown.drainTimeout 60 s is shorter than a stream lives (2160 s): a stopping proxy pod would cut the streams it holds instead of letting each end with its handoff`,
      `${PROXY}: the proxy pods hold streams: envoyDeployment.pod.priorityClassName must name a PriorityClass of these manifests above 0 (has null)`,
    ]);
    const ageRaised = withChange(docs, 'ConfigMap', 'repo-chat-config', (c) => {
      c.data.GATEWAY_MAX_STREAM_AGE_MS = '3600000';
    });
    expect(messages(ageRaised)).to.include(`${PROXY}: shutdown.drainTimeout 2400 s is shorter than a stream lives (4320 s): a stopping proxy pod would cut the streams it holds instead of letting each end with its handoff`);
  });

  it('reads Gateway API durations', () => {
    expect([durationSeconds('1h'), durationSeconds('1h30m'), durationSeconds('2400s'), durationSeconds('500ms'), durationSeconds('0s')]).to.deep.equal([3600, 5400, 2400, 0.5, 0]);
    expect([durationSeconds('1 h'), durationSeconds('1d'), durationSeconds(undefined)]).to.deep.equal([undefined, undefined, undefined]);
  });
});
