/**
 * The Envoy Gateway kinds infra/k8s uses (gateway.envoyproxy.io/v1alpha1, Envoy Gateway 1.9), as
 * strict schemas: EnvoyProxy (the proxy fleet's Deployment, autoscaler, budget and shutdown),
 * ClientTrafficPolicy (the client side of the listener) and BackendTrafficPolicy (a route's side
 * toward its Service).
 */
import { anything, arr, bool, core, duration, int, intOrString, map, obj, quantity, str } from './custom-resource-schema.ts';
import { resource, targetRefs } from './gateway-api-kinds.ts';

export const ENVOY_GATEWAY_API_VERSION = 'gateway.envoyproxy.io/v1alpha1';

/** Gateway API's HTTPHeaderFilter, which Envoy Gateway reuses for added response headers. */
const headerFilter = obj({
  set: arr(obj({ name: str(), value: str() }, ['name', 'value'])),
  add: arr(obj({ name: str(), value: str() }, ['name', 'value'])),
  remove: arr(str()),
});

const envoyDeployment = obj({
  replicas: int(0),
  strategy: core('V1DeploymentStrategy'),
  name: str(),
  pod: obj({
    annotations: map(str()),
    labels: map(str()),
    securityContext: core('V1PodSecurityContext'),
    affinity: core('V1Affinity'),
    tolerations: arr(core('V1Toleration')),
    nodeSelector: map(str()),
    topologySpreadConstraints: arr(core('V1TopologySpreadConstraint')),
    priorityClassName: str(),
  }),
  container: obj({ env: arr(core('V1EnvVar')), resources: core('V1ResourceRequirements'), securityContext: core('V1SecurityContext'), image: str() }),
});

export const ENVOY_PROXY = resource(
  obj({
    provider: obj(
      {
        type: str({ enum: ['Kubernetes', 'Host'] }),
        kubernetes: obj({
          envoyDeployment,
          envoyService: obj({ type: str({ enum: ['ClusterIP', 'LoadBalancer', 'NodePort'] }), annotations: map(str()), labels: map(str()), externalTrafficPolicy: str({ enum: ['Local', 'Cluster'] }), name: str() }),
          envoyHpa: obj(
            { minReplicas: int(1), maxReplicas: int(1), metrics: arr(core('V2MetricSpec')), behavior: core('V2HorizontalPodAutoscalerBehavior') },
            ['maxReplicas'],
          ),
          envoyPDB: obj({ minAvailable: intOrString, maxUnavailable: intOrString }),
        }),
      },
      ['type'],
    ),
    shutdown: obj({ drainTimeout: duration, minDrainDuration: duration, healthCheckFailureDelay: duration }),
    concurrency: int(0),
    logging: obj({ level: map(str({ enum: ['trace', 'debug', 'info', 'warn', 'error'] })) }),
    telemetry: anything,
  }),
);

export const CLIENT_TRAFFIC_POLICY = resource(
  obj(
    {
      targetRefs,
      timeout: obj({
        tcp: obj({ idleTimeout: duration, tlsHandshakeTimeout: duration, connectionInspectionTimeout: duration }),
        http: obj({ requestReceivedTimeout: duration, requestHeadersReceivedTimeout: duration, idleTimeout: duration, streamIdleTimeout: duration }),
      }),
      connection: obj({
        connectionLimit: obj({ value: int(1), closeDelay: duration }),
        bufferLimit: quantity,
        socketBufferLimit: quantity,
        maxAcceptPerSocketEvent: int(0),
      }),
      headers: obj({
        requestID: str({ enum: ['PreserveOrGenerate', 'Preserve', 'Generate', 'Disable'] }),
        enableEnvoyHeaders: bool,
        withUnderscoresAction: str({ enum: ['Allow', 'RejectRequest', 'DropHeader'] }),
      }),
      tcpKeepalive: obj({ probes: int(0), idleTime: duration, interval: duration }),
      tls: obj({ minVersion: str({ enum: ['Auto', '1.0', '1.1', '1.2', '1.3'] }), maxVersion: str({ enum: ['Auto', '1.0', '1.1', '1.2', '1.3'] }), alpnProtocols: arr(str()) }),
      path: obj({ escapedSlashesAction: str({ enum: ['KeepUnchanged', 'RejectRequest', 'UnescapeAndRedirect', 'UnescapeAndForward'] }), disableMergeSlashes: bool }),
      http1: anything,
      http2: anything,
      clientIPDetection: anything,
    },
    ['targetRefs'],
  ),
);

const statusCodeMatch = obj({ type: str({ enum: ['Value', 'Range'] }), value: int(100, 599), range: obj({ start: int(100, 599), end: int(100, 599) }, ['start', 'end']) }, ['type']);

export const BACKEND_TRAFFIC_POLICY = resource(
  obj(
    {
      targetRefs,
      timeout: obj({
        tcp: obj({ connectTimeout: duration }),
        http: obj({ connectionIdleTimeout: duration, maxConnectionDuration: duration, requestTimeout: duration, maxStreamDuration: duration, streamIdleTimeout: duration }),
      }),
      circuitBreaker: obj({ maxConnections: int(0), maxPendingRequests: int(0), maxParallelRequests: int(0), maxParallelRetries: int(0), maxRequestsPerConnection: int(0) }),
      retry: obj({
        numRetries: int(0),
        retryOn: obj({ triggers: arr(str()), httpStatusCodes: arr(int(100, 599)) }),
        perRetry: obj({ timeout: duration, backOff: obj({ baseInterval: duration, maxInterval: duration }) }),
      }),
      loadBalancer: obj({ type: str({ enum: ['ConsistentHash', 'LeastRequest', 'Random', 'RoundRobin', 'BackendUtilization'] }), slowStart: obj({ window: duration }) }, ['type']),
      responseOverride: arr(
        obj(
          {
            match: obj({ statusCodes: arr(statusCodeMatch), responseHeaders: anything }),
            response: obj({
              contentType: str(),
              body: obj({ type: str({ enum: ['Inline', 'ValueRef'] }), inline: str(), valueRef: obj({ group: str(), kind: str(), name: str() }) }),
              statusCode: int(100, 599),
              header: headerFilter,
            }),
            redirect: anything,
            source: str({ enum: ['All', 'Local', 'Backend'] }),
          },
          ['match'],
        ),
      ),
      requestBuffer: obj({ limit: quantity }),
      connection: obj({ bufferLimit: quantity, socketBufferLimit: quantity }),
      tcpKeepalive: obj({ probes: int(0), idleTime: duration, interval: duration }),
      healthCheck: anything,
      rateLimit: anything,
      bandwidthLimit: anything,
      compression: anything,
      compressor: anything,
      faultInjection: anything,
      useClientProtocol: bool,
    },
    ['targetRefs'],
  ),
);
