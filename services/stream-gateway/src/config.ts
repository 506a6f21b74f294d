/**
 * The stream gateway's settings, read from the environment once at start. Nothing else reads `process.env`.
 */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();
const secrets = z
  .string()
  .optional()
  .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []))
  .pipe(z.array(z.string().min(32)));

export const GatewayEnvSchema = z.object({
  /** HTTP port of the streams. @defaultValue 8080 */
  PORT: port.default(8080),
  /** Interface to bind. @defaultValue 0.0.0.0 */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** PostgreSQL URL; unset means embedded PGlite in DATA_DIR (a single-process setup only). */
  DATABASE_URL: z.string().url().optional(),
  /** Folder of the embedded database. @defaultValue ./data */
  DATA_DIR: z.string().min(1).default('./data'),
  /** Connections in the PostgreSQL pool. @defaultValue 10 */
  DATABASE_POOL_SIZE: positiveInt.max(500).default(10),
  /** Redis URL (backbone and stream caps); unset means in-process ones (a single-process setup only). */
  REDIS_URL: z.string().url().optional(),
  /** First segment of every Redis key. @defaultValue chat */
  REDIS_KEY_PREFIX: z.string().min(1).regex(/^[^{}]+$/).default('chat'),
  /** Base URL of the core service. */
  CORE_URL: z.string().url(),
  /** Bearer credential chat presents to core's service API. @defaultValue dev-core's development value */
  CORE_SERVICE_TOKEN: z.string().min(16).default('dev-core-service-token'),
  /** Timeout of one call to core, in milliseconds. @defaultValue 2000 */
  CORE_TIMEOUT_MS: positiveInt.max(60_000).default(2000),
  /** HMAC secret of cursors (at least 32 characters); unset means the one kept in the database. */
  CURSOR_SECRET: z.string().min(32).optional(),
  /** Earlier cursor secrets, comma-separated, still accepted after a rotation. */
  CURSOR_SECRETS_PREVIOUS: secrets,
  /** Interval of `heartbeat` events in milliseconds. @defaultValue 15000 */
  GATEWAY_HEARTBEAT_MS: positiveInt.min(100).default(15_000),
  /** Maximum age of a stream before `handoff` (jittered ±20%), in milliseconds. @defaultValue 1800000 */
  GATEWAY_MAX_STREAM_AGE_MS: positiveInt.min(1000).default(1_800_000),
  /** Interval of live authorization rechecks (jittered ±20%), in milliseconds. @defaultValue 60000 */
  GATEWAY_RECHECK_MS: positiveInt.min(100).default(60_000),
  /** A stream closes this many milliseconds before its token expires. @defaultValue 5000 */
  GATEWAY_TOKEN_EXPIRY_MARGIN_MS: z.coerce.number().int().min(0).default(5000),
  /** Events a client may fall behind before its stream is closed. @defaultValue 1000 */
  GATEWAY_QUEUE_MAX_EVENTS: positiveInt.default(1000),
  /** Bytes a client may fall behind before its stream is closed. @defaultValue 1048576 */
  GATEWAY_QUEUE_MAX_BYTES: positiveInt.min(65_536).default(1_048_576),
  /** Streams one principal may hold across all gateways. @defaultValue 16 */
  STREAM_CAP_PER_PRINCIPAL: positiveInt.default(16),
  /** Streams one room may have across all gateways. @defaultValue 2000 */
  STREAM_CAP_PER_ROOM: positiveInt.default(2000),
  /** Lifetime of a stream-cap lease without renewal (a killed gateway's slots free within it). @defaultValue 30000 */
  STREAM_LEASE_MS: positiveInt.min(1000).default(30_000),
  /** Window over which SIGTERM hands every stream off before exit, in milliseconds. @defaultValue 10000 */
  GATEWAY_DRAIN_MS: z.coerce.number().int().min(0).default(10_000),
  /** Port of the admin server (/healthz, /readyz, /metrics); 0 picks a free one. @defaultValue 9091 */
  GATEWAY_ADMIN_PORT: port.default(9091),
  /** pino log level. @defaultValue info */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type GatewayEnv = z.infer<typeof GatewayEnvSchema>;

/** Parses the environment; a bad value fails the start with every bad variable named. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv): GatewayEnv {
  const parsed = GatewayEnvSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`).join('; ');
  throw new Error(`Invalid configuration: ${problems}`);
}

/** The engine settings of a parsed environment (shared by the standalone gateway and the all-in-one). */
export function engineSettingsOf(env: Pick<GatewayEnv, 'GATEWAY_HEARTBEAT_MS' | 'GATEWAY_MAX_STREAM_AGE_MS' | 'GATEWAY_RECHECK_MS' | 'GATEWAY_TOKEN_EXPIRY_MARGIN_MS' | 'GATEWAY_QUEUE_MAX_EVENTS' | 'GATEWAY_QUEUE_MAX_BYTES'>) {
  return {
    heartbeatMs: env.GATEWAY_HEARTBEAT_MS,
    maxStreamAgeMs: env.GATEWAY_MAX_STREAM_AGE_MS,
    recheckMs: env.GATEWAY_RECHECK_MS,
    tokenExpiryMarginMs: env.GATEWAY_TOKEN_EXPIRY_MARGIN_MS,
    maxEvents: env.GATEWAY_QUEUE_MAX_EVENTS,
    maxBytes: env.GATEWAY_QUEUE_MAX_BYTES,
  };
}

/** The stream caps of a parsed environment. */
export function streamCapsOf(env: Pick<GatewayEnv, 'STREAM_CAP_PER_PRINCIPAL' | 'STREAM_CAP_PER_ROOM' | 'STREAM_LEASE_MS'>) {
  return { principalCap: env.STREAM_CAP_PER_PRINCIPAL, roomCap: env.STREAM_CAP_PER_ROOM, leaseMs: env.STREAM_LEASE_MS };
}

/** The settings the all-in-one process takes from the gateway's environment. */
export const GatewayEngineEnvSchema = GatewayEnvSchema.pick({
  GATEWAY_HEARTBEAT_MS: true,
  GATEWAY_MAX_STREAM_AGE_MS: true,
  GATEWAY_RECHECK_MS: true,
  GATEWAY_TOKEN_EXPIRY_MARGIN_MS: true,
  GATEWAY_QUEUE_MAX_EVENTS: true,
  GATEWAY_QUEUE_MAX_BYTES: true,
  STREAM_CAP_PER_PRINCIPAL: true,
  STREAM_CAP_PER_ROOM: true,
  STREAM_LEASE_MS: true,
  GATEWAY_DRAIN_MS: true,
  REDIS_KEY_PREFIX: true,
});
