/**
 * The API's settings, read from the environment once at start. Nothing else reads `process.env`.
 */
import { parseEnv, port, positiveInt, sharedEnvFields } from '@chat/service-config';
import { z } from 'zod';

export const ApiEnvSchema = z.object({
  ...sharedEnvFields,
  /** Base URL of the core service. Required for the API alone (the all-in-one starts its own). */
  CORE_URL: z.string().url().optional(),
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
});

export type ApiEnv = z.infer<typeof ApiEnvSchema>;

export { parseEnv };
