/**
 * The environment settings every chat service reads the same way, as zod fields to spread into a
 * service's own schema, and the one parser that turns a bad environment into a message naming
 * every bad variable.
 */
import { z } from 'zod';

export const port = z.coerce.number().int().min(0).max(65_535);
export const positiveInt = z.coerce.number().int().positive();

/** Comma-separated secrets of at least 32 characters. */
const secretList = z
  .string()
  .optional()
  .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []))
  .pipe(z.array(z.string().min(32)));

/** Where the service listens, what it stores in, and how it reaches Redis, core and its cursor keys. */
export const sharedEnvFields = {
  /** HTTP port of the public endpoints. @defaultValue 8080 */
  PORT: port.default(8080),
  /** Interface to bind. @defaultValue 0.0.0.0 */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** PostgreSQL URL; unset means embedded PGlite in DATA_DIR (a single-process setup only). */
  DATABASE_URL: z.string().url().optional(),
  /** Folder of the embedded database. @defaultValue ./data */
  DATA_DIR: z.string().min(1).default('./data'),
  /** Connections in the PostgreSQL pool. @defaultValue 10 */
  DATABASE_POOL_SIZE: positiveInt.max(500).default(10),
  /** Redis URL; unset means in-process backbone and counters (a single-process setup only). */
  REDIS_URL: z.string().url().optional(),
  /** First segment of every Redis key (the same in every service of one deployment). @defaultValue chat */
  REDIS_KEY_PREFIX: z.string().min(1).max(64).regex(/^[^{}]+$/).default('chat'),
  /** Bearer credential chat presents to core's service API. @defaultValue dev-core's development value */
  CORE_SERVICE_TOKEN: z.string().min(16).default('dev-core-service-token'),
  /** Timeout of one call to core, in milliseconds. @defaultValue 2000 */
  CORE_TIMEOUT_MS: positiveInt.max(60_000).default(2000),
  /** HMAC secret of cursors (at least 32 characters); unset means one generated once and kept in the database. */
  CURSOR_SECRET: z.string().min(32).optional(),
  /** Earlier cursor secrets, comma-separated, still accepted after a rotation. */
  CURSOR_SECRETS_PREVIOUS: secretList,
  /** pino log level. @defaultValue info */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
};

/**
 * Parses the environment. On a bad value it throws an error naming every bad variable, so a
 * misconfigured pod fails at start with a message an operator can act on.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`).join('; ');
  throw new Error(`Invalid configuration: ${problems}`);
}
