/**
 * The API's settings, read from the environment once at start. Nothing else reads `process.env`.
 */
import { z } from 'zod';

const port = z.coerce.number().int().min(0).max(65_535);
const positiveInt = z.coerce.number().int().positive();

export const ApiEnvSchema = z.object({
  /** HTTP port of the public API. @defaultValue 8080 */
  PORT: port.default(8080),
  /** Interface to bind. @defaultValue 0.0.0.0 */
  HOST: z.string().min(1).default('0.0.0.0'),
  /** PostgreSQL URL; unset means embedded PGlite in DATA_DIR. */
  DATABASE_URL: z.string().url().optional(),
  /** Folder of the embedded database. @defaultValue ./data */
  DATA_DIR: z.string().min(1).default('./data'),
  /** Connections in the PostgreSQL pool. @defaultValue 10 */
  DATABASE_POOL_SIZE: positiveInt.max(500).default(10),
  /** Redis URL; unset means the in-process backbone. */
  REDIS_URL: z.string().url().optional(),
  /** First segment of every Redis key (the same in every service of one deployment). @defaultValue chat */
  REDIS_KEY_PREFIX: z.string().min(1).regex(/^[^{}]+$/).default('chat'),
  /** Base URL of the core service. Required for the API alone (the all-in-one starts its own). */
  CORE_URL: z.string().url().optional(),
  /** Bearer credential chat presents to core's service API. @defaultValue dev-core's development value */
  CORE_SERVICE_TOKEN: z.string().min(16).default('dev-core-service-token'),
  /** Timeout of one call to core, in milliseconds. @defaultValue 2000 */
  CORE_TIMEOUT_MS: positiveInt.max(60_000).default(2000),
  /** HMAC secret of cursors (at least 32 characters); unset means one generated once and kept in the database. */
  CURSOR_SECRET: z.string().min(32).optional(),
  /** Earlier cursor secrets, comma-separated, still accepted after a rotation. */
  CURSOR_SECRETS_PREVIOUS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []))
    .pipe(z.array(z.string().min(32))),
  /** Largest JSON request body in bytes (room for a 16 KiB body written as \\u escapes). @defaultValue 262144 */
  API_BODY_LIMIT_BYTES: positiveInt.min(1024).max(10 * 1024 * 1024).default(262_144),
  /** Port of the admin server (/healthz, /readyz, /metrics); 0 picks a free one. @defaultValue 9090 */
  API_ADMIN_PORT: port.default(9090),
  /** How long SIGTERM waits for in-flight requests before closing connections. @defaultValue 10000 */
  API_SHUTDOWN_GRACE_MS: positiveInt.max(600_000).default(10_000),
  /** Appends allowed per window per rate key. @defaultValue 120 */
  APPEND_RATE_LIMIT: positiveInt.default(120),
  /** Length of the append rate window in seconds. @defaultValue 60 */
  APPEND_RATE_WINDOW_SECONDS: positiveInt.max(86_400).default(60),
  /** What one window counts: each sender per room, or each sender across rooms. @defaultValue sender-room */
  APPEND_RATE_SCOPE: z.enum(['sender-room', 'sender']).default('sender-room'),
  /** With Redis unreachable: `open` lets appends through, `closed` answers 503. @defaultValue open */
  APPEND_RATE_FAILURE_MODE: z.enum(['open', 'closed']).default('open'),
  /** Longest wait for the shared rate window in Redis before APPEND_RATE_FAILURE_MODE applies. @defaultValue 1000 */
  APPEND_RATE_TIMEOUT_MS: positiveInt.max(10_000).default(1000),
  /**
   * TEST ONLY: `commit:N` kills the process (SIGKILL) right after the Nth new message's commit and
   * before its publish; `publish:N` after its publish and before the response. Never set in production.
   * @defaultValue unset (off)
   */
  CHAT_TEST_FAULT_EXIT_AFTER_COMMIT: z
    .string()
    .regex(/^(commit|publish):[1-9][0-9]*$/, 'must be commit:N or publish:N')
    .transform((v) => {
      const [point, nth] = v.split(':') as ['commit' | 'publish', string];
      return { point, nth: Number(nth) };
    })
    .optional(),
  /** pino log level. @defaultValue info */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type ApiEnv = z.infer<typeof ApiEnvSchema>;

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
