/**
 * What the ingress rules know about the proxy tier: Envoy Gateway's defaults where a manifest
 * leaves a field unset, ingress-nginx's where the manifests still hold an Ingress, and the margins
 * the rules require. Each default is the implementation's documented one.
 */

/** The GatewayClass controller of Envoy Gateway: xDS updates without reloads, draining proxy pods. */
export const ENVOY_GATEWAY_CONTROLLER = 'gateway.envoyproxy.io/gatewayclass-controller';

/** Envoy Gateway's `shutdown.drainTimeout` when unset (also Envoy's `--drain-time-s`). */
export const ENVOY_DEFAULT_DRAIN_SECONDS = 60;

/** Envoy Gateway's upstream `connectionIdleTimeout` when unset: one hour. */
export const ENVOY_DEFAULT_UPSTREAM_IDLE_SECONDS = 3600;

/** Envoy's cluster circuit-breaker thresholds when unset (connections, requests, pending requests). */
export const ENVOY_DEFAULT_CIRCUIT_BREAKER = 1024;

/** ingress-nginx's `upstream-keepalive-timeout` default: idle upstream connections are kept 60 s. */
export const INGRESS_NGINX_UPSTREAM_KEEPALIVE_MS = 60_000;

/** How much longer than the proxy's upstream idle timeout a service keeps an idle connection open. */
export const KEEP_ALIVE_MARGIN_MS = 5_000;

/** `HTTP_KEEP_ALIVE_TIMEOUT_MS` when neither the ConfigMap nor the container sets it (libraries/service-config). */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;

/** `GATEWAY_MAX_STREAM_AGE_MS` and `GATEWAY_HEARTBEAT_MS` when unset (services/stream-gateway). */
export const DEFAULT_MAX_STREAM_AGE_MS = 1_800_000;
export const DEFAULT_HEARTBEAT_MS = 15_000;

/** A stream's age at its `handoff` is jittered ±20 %: the longest a stream lives is the age × 1.2. */
export const STREAM_AGE_JITTER = 0.2;

/** Heartbeats a stream may miss before the proxy's stream idle timeout may end it. */
export const MISSED_HEARTBEATS = 2;

/** Proxy connections a stream holds: the client's, and the one to its gateway pod. */
export const PROXY_CONNECTIONS_PER_STREAM = 2;

/** The Pods metric of the proxies' autoscaler: Envoy's client connections per pod. */
export const PROXY_CONNECTIONS_METRIC = 'envoy_server_total_connections';

/** The envelope's request ID in a response override: the request's X-Request-Id, as Envoy has it. */
export const REQUEST_ID_OPERATOR = '%REQ(X-REQUEST-ID)%';
