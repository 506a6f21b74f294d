/**
 * The kinds infra/k8s may use. A core kind has the kubernetes-models class that validates it
 * against the Kubernetes OpenAPI schema (required fields, types, formats, enums) and the
 * @kubernetes/client-node model name whose attribute map lists its fields (for the unknown-field
 * check); a custom resource (Gateway API, Envoy Gateway) has a strict schema of its own
 * (custom-resource-schema.ts). Anything not listed is an unknown kind and fails: a typo in `kind` or
 * `apiVersion` must not pass unchecked.
 */
import type { SchemaNode } from './custom-resource-schema.ts';
import { BACKEND_TRAFFIC_POLICY, CLIENT_TRAFFIC_POLICY, ENVOY_GATEWAY_API_VERSION, ENVOY_PROXY } from './envoy-gateway-kinds.ts';
import { GATEWAY, GATEWAY_API_VERSION, GATEWAY_CLASS, HTTP_ROUTE } from './gateway-api-kinds.ts';
import { MONITORING_API_VERSION, POD_MONITOR, PROMETHEUS_RULE, SERVICE_MONITOR } from './monitoring-kinds.ts';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { PriorityClass } from 'kubernetes-models/scheduling.k8s.io/v1';
import { ConfigMap, Namespace, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';

/** A kubernetes-models class: construct with the object, `validate()` throws on a schema violation. */
type SchemaModel = new (data: never) => { validate(): void };

interface CoreKind {
  apiVersion: string;
  kind: string;
  model: SchemaModel;
  /** Name of the @kubernetes/client-node model class (e.g. `V1Deployment`). */
  clientModel: string;
  namespaced: boolean;
}

interface CustomKind {
  apiVersion: string;
  kind: string;
  /** The whole object's strict schema. */
  schema: SchemaNode;
  namespaced: boolean;
}

export type KnownKind = CoreKind | CustomKind;

export const KNOWN_KINDS: readonly KnownKind[] = [
  { apiVersion: 'v1', kind: 'Namespace', model: Namespace, clientModel: 'V1Namespace', namespaced: false },
  { apiVersion: 'v1', kind: 'ServiceAccount', model: ServiceAccount, clientModel: 'V1ServiceAccount', namespaced: true },
  { apiVersion: 'v1', kind: 'ConfigMap', model: ConfigMap, clientModel: 'V1ConfigMap', namespaced: true },
  { apiVersion: 'v1', kind: 'Secret', model: Secret, clientModel: 'V1Secret', namespaced: true },
  { apiVersion: 'v1', kind: 'Service', model: Service, clientModel: 'V1Service', namespaced: true },
  { apiVersion: 'apps/v1', kind: 'Deployment', model: Deployment, clientModel: 'V1Deployment', namespaced: true },
  { apiVersion: 'batch/v1', kind: 'Job', model: Job, clientModel: 'V1Job', namespaced: true },
  { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', model: HorizontalPodAutoscaler, clientModel: 'V2HorizontalPodAutoscaler', namespaced: true },
  { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', model: PodDisruptionBudget, clientModel: 'V1PodDisruptionBudget', namespaced: true },
  { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', model: Ingress, clientModel: 'V1Ingress', namespaced: true },
  { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', model: PriorityClass, clientModel: 'V1PriorityClass', namespaced: false },
  { apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', model: NetworkPolicy, clientModel: 'V1NetworkPolicy', namespaced: true },
  { apiVersion: GATEWAY_API_VERSION, kind: 'GatewayClass', schema: GATEWAY_CLASS, namespaced: false },
  { apiVersion: GATEWAY_API_VERSION, kind: 'Gateway', schema: GATEWAY, namespaced: true },
  { apiVersion: GATEWAY_API_VERSION, kind: 'HTTPRoute', schema: HTTP_ROUTE, namespaced: true },
  { apiVersion: ENVOY_GATEWAY_API_VERSION, kind: 'EnvoyProxy', schema: ENVOY_PROXY, namespaced: true },
  { apiVersion: ENVOY_GATEWAY_API_VERSION, kind: 'ClientTrafficPolicy', schema: CLIENT_TRAFFIC_POLICY, namespaced: true },
  { apiVersion: ENVOY_GATEWAY_API_VERSION, kind: 'BackendTrafficPolicy', schema: BACKEND_TRAFFIC_POLICY, namespaced: true },
  { apiVersion: MONITORING_API_VERSION, kind: 'ServiceMonitor', schema: SERVICE_MONITOR, namespaced: true },
  { apiVersion: MONITORING_API_VERSION, kind: 'PodMonitor', schema: POD_MONITOR, namespaced: true },
  { apiVersion: MONITORING_API_VERSION, kind: 'PrometheusRule', schema: PROMETHEUS_RULE, namespaced: true },
];

export function findKind(apiVersion: unknown, kind: unknown): KnownKind | undefined {
  return KNOWN_KINDS.find((k) => k.apiVersion === apiVersion && k.kind === kind);
}
