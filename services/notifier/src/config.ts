/**
 * The standalone notifier's settings, read from the environment once at start. Nothing else reads
 * `process.env`.
 */
import { z } from 'zod';

const positiveInt = z.coerce.number().int().positive();

export const NotifierEnvSchema = z.object({
  /** PostgreSQL URL (required: the standalone notifier shares the database with the API). */
  DATABASE_URL: z.string().url(),
  /** Connections in the PostgreSQL pool. @defaultValue 10 */
  DATABASE_POOL_SIZE: positiveInt.max(500).default(10),
  /** Redis URL of the Streams backbone (required). */
  REDIS_URL: z.string().url(),
  /** First segment of every backbone key; must match the API's. @defaultValue chat */
  REDIS_KEY_PREFIX: z.string().min(1).max(64).regex(/^[^{}]+$/).default('chat'),
  /** Base URL of the core service (required). */
  CORE_URL: z.string().url(),
  /** Bearer credential chat presents to core's service API. @defaultValue dev-core's development value */
  CORE_SERVICE_TOKEN: z.string().min(16).default('dev-core-service-token'),
  /** Timeout of one call to core, in milliseconds. @defaultValue 2000 */
  CORE_TIMEOUT_MS: positiveInt.max(60_000).default(2000),
  /** Consumer group on the `messages` channel. @defaultValue notifier */
  NOTIFIER_GROUP: z.string().min(1).max(64).default('notifier'),
  /** This member's name in the group; unset means host name, pid and a random suffix. */
  NOTIFIER_CONSUMER_NAME: z.string().min(1).max(128).optional(),
  /** Backbone entries read per partition per round. @defaultValue 64 */
  NOTIFIER_BATCH_SIZE: positiveInt.max(10_000).default(64),
  /** A crashed member's pending entries are taken over after this long (ms). @defaultValue 30000 */
  NOTIFIER_CLAIM_IDLE_MS: positiveInt.default(30_000),
  /** Deliveries of one backbone entry before it is dead-lettered. @defaultValue 5 */
  NOTIFIER_MAX_DELIVERIES: positiveInt.max(1000).default(5),
  /** Pause between fan-out sweeps (ms). @defaultValue 1000 */
  NOTIFIER_SWEEP_INTERVAL_MS: positiveInt.default(1000),
  /** Fan-out rows younger than this (ms) are left to the backbone path. @defaultValue 5000 */
  NOTIFIER_SWEEP_GRACE_MS: z.coerce.number().int().min(0).default(5000),
  /** Fan-out rows claimed per sweep. @defaultValue 100 */
  NOTIFIER_SWEEP_BATCH_SIZE: positiveInt.max(10_000).default(100),
  /** Fan-out runs at once, on the backbone path and in the sweeper each. @defaultValue 8 */
  NOTIFIER_CONCURRENCY: positiveInt.max(256).default(8),
  /** How long a claim keeps other notifiers off a fan-out row (ms). @defaultValue 30000 */
  NOTIFIER_LEASE_MS: positiveInt.default(30_000),
  /** Failed attempts before a fan-out row is dead-lettered. @defaultValue 5 */
  NOTIFIER_MAX_ATTEMPTS: positiveInt.max(1000).default(5),
  /** First retry delay after a failed attempt (ms); doubles per attempt up to 60 s. @defaultValue 1000 */
  NOTIFIER_RETRY_DELAY_MS: positiveInt.default(1000),
  /** Port of the admin server (/healthz, /readyz, /metrics); 0 picks a free one. @defaultValue 9092 */
  NOTIFIER_ADMIN_PORT: z.coerce.number().int().min(0).max(65_535).default(9092),
  /** pino log level. @defaultValue info */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type NotifierEnv = z.infer<typeof NotifierEnvSchema>;

/** Parses the environment; a bad value fails start with a message naming every bad variable. */
export function loadNotifierConfig(env: NodeJS.ProcessEnv): NotifierEnv {
  const parsed = NotifierEnvSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`).join('; ');
  throw new Error(`Invalid configuration: ${problems}`);
}
