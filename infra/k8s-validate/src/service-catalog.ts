/**
 * What the rules know about each workload, keyed by its `app.kubernetes.io/component` label: the
 * package whose script the container must run, and, for Deployments, the admin-port and drain
 * settings (ConfigMap keys) the probes and the termination grace period are checked against.
 */
export interface WorkloadSpec {
  /** Folder of the workspace package, relative to the repository root. */
  packageDir: string;
  /** The package.json script the container command stands for. */
  script: string;
  /** ConfigMap key of the admin port (Deployments only). */
  adminPortKey?: string;
  /** How long SIGTERM may take before the process exits: a ConfigMap key, or a fixed budget. */
  drain?: { key: string } | { fixedMs: number };
  /** Holds client streams for a long time: Guaranteed QoS and a PriorityClass above the default. */
  holdsStreams?: boolean;
}

export const WORKLOADS: Readonly<Record<string, WorkloadSpec>> = {
  api: { packageDir: 'services/api', script: 'start', adminPortKey: 'API_ADMIN_PORT', drain: { key: 'API_SHUTDOWN_GRACE_MS' } },
  'stream-gateway': {
    packageDir: 'services/stream-gateway',
    script: 'start',
    adminPortKey: 'GATEWAY_ADMIN_PORT',
    drain: { key: 'GATEWAY_DRAIN_MS' },
    holdsStreams: true,
  },
  // The notifier has no drain setting: stop() ends the consumer's block (1 s) and settles the batch
  // in hand, whose core calls time out after CORE_TIMEOUT_MS (2 s). Ten seconds covers it.
  notifier: { packageDir: 'services/notifier', script: 'start', adminPortKey: 'NOTIFIER_ADMIN_PORT', drain: { fixedMs: 10_000 } },
  // Answers the ingress's own refusals in the envelope; it closes its server at once on SIGTERM.
  'ingress-errors': { packageDir: 'services/ingress-errors', script: 'start', adminPortKey: 'INGRESS_ERRORS_ADMIN_PORT', drain: { fixedMs: 1_000 } },
  // The web viewer's static server: answers from memory and closes its server at once on SIGTERM.
  viewer: { packageDir: 'services/viewer', script: 'start', adminPortKey: 'VIEWER_ADMIN_PORT', drain: { fixedMs: 1_000 } },
  migrate: { packageDir: 'libraries/store', script: 'migrate' },
};

/**
 * Where the Dockerfile puts the output of `pnpm deploy` of the all-in-one package inside the image:
 * every other workspace package is a dependency of it, under node_modules.
 */
export const IMAGE_APP_ROOT = '/app';

/** A workspace package's folder inside the image, where its scripts run. */
export const imagePackageDir = (packageName: string): string => `${IMAGE_APP_ROOT}/node_modules/${packageName}`;

/**
 * Folders of infra/k8s holding configuration for cluster add-ons the application relies on, applied
 * by their own kustomization into the add-on's namespace: folder → namespace.
 */
export const ADDON_NAMESPACES: Readonly<Record<string, string>> = {
  // The rule that serves the gateways' open-streams gauge as a custom metric to their autoscaler.
  'prometheus-adapter': 'monitoring',
};

/** Time between SIGTERM's deadline and the end of the drain that the grace period must leave. */
export const GRACE_MARGIN_MS = 5_000;

/**
 * The HorizontalPodAutoscaler's default tolerance: it changes the replica count only when the
 * metric is more than 10 % off its target, so pods may sit at 110 % of the target indefinitely.
 */
export const HPA_TOLERANCE = 0.1;

/** `HTTP_MAX_CONNECTIONS` when neither the ConfigMap nor the container sets it (libraries/service-config). */
export const DEFAULT_MAX_CONNECTIONS = 20_000;

/** Above the design load of docs/capacity.md, the share of capacity the gateway HPA's maximum must leave. */
export const DESIGN_LOAD_MARGIN = 0.1;

/** The pod-template annotation that carries the SHA-256 of the ConfigMap's data. */
export const CONFIG_CHECKSUM_ANNOTATION = 'checksum/config';

/** Where the docs state the sum of the database pools at the HPA maxima, relative to the repository root. */
export const POOL_SUM_DOCS = ['docs/operations.md', 'docs/capacity.md'];

/** Keys that hold credentials: allowed in the Secret only, never in the ConfigMap. */
export const SECRET_KEYS = ['DATABASE_URL', 'REDIS_URL', 'CORE_SERVICE_TOKEN', 'CURSOR_SECRET', 'CURSOR_SECRETS_PREVIOUS'];

/** What a committed Secret value must contain (or be empty) to count as a placeholder. */
export const PLACEHOLDER_MARK = 'REPLACE_ME';

/**
 * Paths that are no spec operation but must reach the API (which answers them, or 404s them in the
 * envelope); the operations themselves come from the OpenAPI document (spec-operations.ts).
 */
export const API_PATH_SAMPLES = [
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room/events/extra',
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room/event',
  '/v1/openapi.json',
];
/** The web viewer's paths: the routes must send these to the viewer, on the API's host. */
export const VIEWER_PATH_SAMPLES = ['/', '/callback', '/viewer-config.json', '/assets/app-3XK2PZ4A.js', '/assets/styles-QWJ7M2LD.css'];
