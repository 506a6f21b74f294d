/**
 * The Gateway API kinds infra/k8s uses (standard channel, gateway.networking.k8s.io/v1, Gateway API
 * 1.2 and later), as strict schemas: GatewayClass, Gateway and HTTPRoute.
 */
import { arr, core, duration, int, map, obj, str, type SchemaNode } from './custom-resource-schema.ts';

export const GATEWAY_API_VERSION = 'gateway.networking.k8s.io/v1';

/** The object around a spec: apiVersion, kind, metadata (checked as core ObjectMeta) and the spec. */
export function resource(spec: SchemaNode): SchemaNode {
  return obj({ apiVersion: str(), kind: str(), metadata: core('V1ObjectMeta'), spec }, ['spec']);
}

const name = str({ pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/ });
const hostname = str({ pattern: /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/ });
const port = int(1, 65_535);
const headerName = str({ pattern: /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/ });

const objectRef = obj({ group: str(), kind: str(), name, namespace: str() }, ['name']);
const headerModifier = obj({
  set: arr(obj({ name: headerName, value: str() }, ['name', 'value'])),
  add: arr(obj({ name: headerName, value: str() }, ['name', 'value'])),
  remove: arr(headerName),
});
const pathModifier = obj({ type: str({ enum: ['ReplaceFullPath', 'ReplacePrefixMatch'] }), replaceFullPath: str(), replacePrefixMatch: str() }, ['type']);

const routeFilter = obj(
  {
    type: str({ enum: ['RequestHeaderModifier', 'ResponseHeaderModifier', 'RequestMirror', 'RequestRedirect', 'URLRewrite', 'ExtensionRef', 'CORS'] }),
    requestHeaderModifier: headerModifier,
    responseHeaderModifier: headerModifier,
    requestRedirect: obj({ scheme: str({ enum: ['http', 'https'] }), hostname, path: pathModifier, port, statusCode: int(301, 308) }),
    urlRewrite: obj({ hostname, path: pathModifier }),
    requestMirror: obj({ backendRef: objectRef, percent: int(0, 100) }, ['backendRef']),
    extensionRef: obj({ group: str(), kind: str(), name }, ['group', 'kind', 'name']),
  },
  ['type'],
);

const httpRouteMatch = obj({
  path: obj({ type: str({ enum: ['Exact', 'PathPrefix', 'RegularExpression'] }), value: str({ pattern: /^\// }) }),
  headers: arr(obj({ type: str({ enum: ['Exact', 'RegularExpression'] }), name: headerName, value: str() }, ['name', 'value'])),
  queryParams: arr(obj({ type: str({ enum: ['Exact', 'RegularExpression'] }), name: str(), value: str() }, ['name', 'value'])),
  method: str({ enum: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'] }),
});

const httpRouteRule = obj({
  name,
  matches: arr(httpRouteMatch),
  filters: arr(routeFilter),
  backendRefs: arr(obj({ group: str(), kind: str(), name, namespace: str(), port, weight: int(0, 1_000_000), filters: arr(routeFilter) }, ['name'])),
  timeouts: obj({ request: duration, backendRequest: duration }),
  retry: obj({ codes: arr(int(400, 599)), attempts: int(0), backoff: duration }),
});

const listener = obj(
  {
    name,
    hostname,
    port,
    protocol: str({ enum: ['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP'] }),
    tls: obj({ mode: str({ enum: ['Terminate', 'Passthrough'] }), certificateRefs: arr(objectRef), options: map(str()) }),
    allowedRoutes: obj({
      namespaces: obj({ from: str({ enum: ['All', 'Same', 'Selector'] }), selector: core('V1LabelSelector') }),
      kinds: arr(obj({ group: str(), kind: str() }, ['kind'])),
    }),
  },
  ['name', 'port', 'protocol'],
);

export const GATEWAY_CLASS = resource(
  obj({ controllerName: str(), description: str(), parametersRef: obj({ group: str(), kind: str(), name: str(), namespace: str() }, ['group', 'kind', 'name']) }, ['controllerName']),
);

export const GATEWAY = resource(
  obj(
    {
      gatewayClassName: name,
      listeners: arr(listener, 1),
      addresses: arr(obj({ type: str(), value: str() }, ['value'])),
      infrastructure: obj({ labels: map(str()), annotations: map(str()), parametersRef: obj({ group: str(), kind: str(), name: str() }, ['group', 'kind', 'name']) }),
    },
    ['gatewayClassName', 'listeners'],
  ),
);

export const HTTP_ROUTE = resource(
  obj({
    parentRefs: arr(obj({ group: str(), kind: str(), namespace: str(), name, sectionName: name, port }, ['name'])),
    hostnames: arr(hostname),
    rules: arr(httpRouteRule),
  }),
);

/** Used by the Envoy Gateway kinds, whose policies attach to these. */
export const targetRefs = arr(obj({ group: str(), kind: str(), name, sectionName: name }, ['group', 'kind', 'name']), 1);
