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
}

export const WORKLOADS: Readonly<Record<string, WorkloadSpec>> = {
  api: { packageDir: 'services/api', script: 'start', adminPortKey: 'API_ADMIN_PORT', drain: { key: 'API_SHUTDOWN_GRACE_MS' } },
  'stream-gateway': {
    packageDir: 'services/stream-gateway',
    script: 'start',
    adminPortKey: 'GATEWAY_ADMIN_PORT',
    drain: { key: 'GATEWAY_DRAIN_MS' },
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

/** Keys that hold credentials: allowed in the Secret only, never in the ConfigMap. */
export const SECRET_KEYS = ['DATABASE_URL', 'REDIS_URL', 'CORE_SERVICE_TOKEN', 'CURSOR_SECRET', 'CURSOR_SECRETS_PREVIOUS'];

/** What a committed Secret value must contain (or be empty) to count as a placeholder. */
export const PLACEHOLDER_MARK = 'REPLACE_ME';

/** Paths the spec serves as text/event-stream: the Ingress must send these, and only these, to the gateways. */
export const STREAM_PATH_SAMPLES = [
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room/events',
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/branches/01JGFJJZ01ABCDEFGHJKMNPQRS/room/events',
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/inbox/events',
];
export const API_PATH_SAMPLES = [
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room',
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room/messages',
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/branches/01JGFJJZ01ABCDEFGHJKMNPQRS/room/messages',
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/inbox',
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/inbox/acknowledgements',
  '/v1/repositories/01JGFJJZ00QNYBVPQTAT49MN0F/room/events/extra',
  '/v1/openapi.json',
];
/** The web viewer's paths: the Ingress must send these to the viewer, on the API's host. */
export const VIEWER_PATH_SAMPLES = ['/', '/callback', '/viewer-config.json', '/assets/app-3XK2PZ4A.js', '/assets/styles-QWJ7M2LD.css'];
