/**
 * The environment settings every chat service reads the same way, as zod fields to spread into a
 * service's own schema. Each field carries its description (`.describe`) for the README's generated
 * configuration table; defaults come from the schema itself.
 */
import { z } from 'zod';

export const port = z.coerce.number().int().min(0).max(65_535);
export const positiveInt = z.coerce.number().int().positive();
export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
/** `true` or `false`, as environment variables spell booleans. */
export const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

/** The public development service token dev-core and chat share by default; refused outside development mode. */
export const DEVELOPMENT_SERVICE_TOKEN = 'dev-core-service-token';

/** Comma-separated secrets of at least 32 characters. */
const secretList = z
  .string()
  .optional()
  .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []))
  .pipe(z.array(z.string().min(32)));

/** Whether the process may run with development credentials and plain-http core. */
export const developmentFields = {
  CHAT_DEVELOPMENT_MODE: flag
    .default(false)
    .describe('`true` allows the public development service token and a plain-http `CORE_URL` on a non-loopback host (the all-in-one always runs in development mode)'),
};

export const logFields = {
  LOG_LEVEL: logLevel.default('info').describe('pino log level'),
};

/** The public HTTP server: where it listens and how long it waits for slow clients. */
export const httpFields = {
  PORT: port.default(8080).describe('public HTTP port'),
  HOST: z.string().min(1).default('0.0.0.0').describe('interface the public HTTP server binds'),
  HTTP_HEADERS_TIMEOUT_MS: positiveInt.max(600_000).default(20_000).describe('a client must send its request headers within this time, or the socket is closed'),
  HTTP_REQUEST_TIMEOUT_MS: positiveInt.max(3_600_000).default(60_000).describe('a client must send its whole request (headers and body) within this time; open event streams are not cut by it'),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: positiveInt.max(600_000).default(5_000).describe('an idle keep-alive connection is closed after this time'),
  HTTP_MAX_CONNECTIONS: positiveInt.max(1_000_000).default(20_000).describe('open connections the server accepts at once (streams included); beyond it new sockets are closed'),
};

export const adminFields = {
  ADMIN_HOST: z.string().min(1).default('0.0.0.0').describe('interface the admin server (`/healthz`, `/readyz`, `/metrics`) binds'),
};

export const databaseFields = {
  DATABASE_URL: z.string().url().optional().describe('PostgreSQL URL; unset means embedded PGlite in `DATA_DIR` (one process only)'),
  DATA_DIR: z
    .string()
    .min(1)
    .default('./data')
    .describe("folder of the embedded database, owned by one process at a time (another process started on it is refused, naming the owner's PID); the all-in-one also keeps its dev-core's signing keys there"),
  DATABASE_POOL_SIZE: positiveInt.max(500).default(10).describe('PostgreSQL connections per process'),
  DATABASE_POOLER: z
    .enum(['none', 'transaction'])
    .default('none')
    .describe('`transaction` when `DATABASE_URL` is a transaction-pooling proxy (PgBouncer `pool_mode = transaction`): statements go unnamed and no session setting is sent at connect (see docs/operations.md)'),
  MIGRATE_ON_START: flag
    .default(true)
    .describe('`true`: the process applies pending migrations and changed SQL functions at start (advisory-locked); `false`: it leaves the schema to the migration Job and its DDL role (infra/k8s sets `false` in every Deployment)'),
};

/** Comma-separated `host:port` pairs. */
const hostPortList = z
  .string()
  .optional()
  .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []))
  .pipe(z.array(z.string().regex(/^[^\s:,/]+:\d{1,5}$/, 'expected host:port')));

export const redisFields = {
  REDIS_URL: z.string().url().optional().describe('Redis URL; unset means the in-process backbone and stream-cap leases (one process only). In `cluster` mode one node of the cluster, in `sentinel` mode one sentinel; its user, password and TLS (`rediss:`) are those of the data nodes'),
  REDIS_MODE: z
    .enum(['single', 'cluster', 'sentinel'])
    .default('single')
    .describe('`single`: one Redis (a primary, replicas or not); `cluster`: a Redis Cluster (see docs/operations.md); `sentinel`: the primary Sentinel names `REDIS_SENTINEL_NAME`, followed through failover'),
  REDIS_SEED_NODES: hostPortList.describe('`cluster`: further nodes to discover the cluster from; `sentinel`: further sentinels; comma-separated `host:port`'),
  REDIS_SENTINEL_NAME: z.string().min(1).default('mymaster').describe('the primary group Sentinel watches (`sentinel` mode)'),
  REDIS_KEY_PREFIX: z.string().min(1).max(64).regex(/^[^{}]+$/).default('chat').describe('first segment of every Redis key; the same in every service of one deployment'),
};

export const coreFields = {
  CORE_URL: z.string().url().optional().describe('core base URL; the all-in-one starts its own dev-core when unset, the other services require it'),
  CORE_SERVICE_TOKEN: z.string().min(16).default(DEVELOPMENT_SERVICE_TOKEN).describe('bearer credential chat presents to core; the default is public and refused outside development mode'),
  CORE_TIMEOUT_MS: positiveInt.max(60_000).default(2000).describe('timeout of one call to core; beyond it the answer is 503 `AUTHORIZATION_UNAVAILABLE`'),
  CORE_AUTHORIZATIONS_PER_PRINCIPAL: positiveInt
    .max(1024)
    .default(64)
    .describe("authorizations one principal (a user or a bot) may have waiting for core or in a call at once, per process; past it that principal's next request is refused with 503 `AUTHORIZATION_UNAVAILABLE` and `Retry-After`, so one flooding token cannot fill the authorization queue every principal shares (1,024)"),
};

export const cursorFields = {
  CURSOR_SECRET: z.string().min(32).optional().describe('HMAC secret of cursors (at least 32 characters); unset means one generated once and kept in the database'),
  CURSOR_SECRETS_PREVIOUS: secretList.describe('comma-separated earlier cursor secrets still accepted after a rotation'),
};

/** Everything the API and the gateway share. */
export const sharedEnvFields = {
  ...developmentFields,
  ...httpFields,
  ...adminFields,
  ...databaseFields,
  ...redisFields,
  ...coreFields,
  ...cursorFields,
  ...logFields,
};

/** Where webhooks may be sent: read by the API (registration) and by the notifier (every delivery). */
export const webhookAddressFields = {
  WEBHOOK_ALLOW_LOOPBACK: flag
    .optional()
    .describe('`true` lets webhooks reach loopback (127.0.0.0/8, ::1), by plain http too: a bot on the same machine; unset means on in development mode, off otherwise'),
  WEBHOOK_ALLOWED_CIDRS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []))
    .describe('comma-separated private ranges webhooks may reach (e.g. `10.20.0.0/16` for an in-cluster receiver); every other private, loopback and link-local address is refused'),
  WEBHOOKS_PER_PRINCIPAL: positiveInt.max(100).default(5).describe('webhooks one user or bot may register'),
};

/** How the notifier delivers webhooks: read by the notifier and by the all-in-one. */
export const webhookDeliveryFields = {
  WEBHOOK_TIMEOUT_MS: positiveInt.max(60_000).default(10_000).describe("longest wait for a webhook receiver's answer; no 2xx within it is a failed attempt"),
  WEBHOOK_MAX_ATTEMPTS: positiveInt.max(100).default(8).describe('failed attempts at one webhook delivery before it goes to the dead-letter set'),
  WEBHOOK_RETRY_BASE_MS: positiveInt.default(1000).describe('first retry step of a failed webhook delivery; the step doubles per failure, the wait is uniform over its upper half'),
  WEBHOOK_RETRY_MAX_MS: positiveInt.default(3_600_000).describe('largest retry step of a webhook delivery'),
  WEBHOOK_CONCURRENCY: positiveInt.max(1024).default(32).describe('webhook lanes (one per webhook and repository) delivering at once in one notifier'),
};
