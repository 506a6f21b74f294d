/**
 * The settings of the ingress's error backend (`ingress-errors-main.ts`), read from the environment
 * once at start. It needs no store, Redis or core: it must answer when they, or the API, cannot.
 */
import { parseEnv, port, sharedEnvFields } from '@chat/service-config';
import { z } from 'zod';

export const IngressErrorsEnvSchema = z.object({
  PORT: sharedEnvFields.PORT,
  HOST: sharedEnvFields.HOST,
  LOG_LEVEL: sharedEnvFields.LOG_LEVEL,
  /** Port of the admin server (/healthz, /readyz, /metrics); 0 picks a free one. @defaultValue 9093 */
  INGRESS_ERRORS_ADMIN_PORT: port.default(9093),
});

export type IngressErrorsEnv = z.infer<typeof IngressErrorsEnvSchema>;

/** Parses the environment; a bad value fails the start with every bad variable named. */
export function loadIngressErrorsConfig(env: NodeJS.ProcessEnv): IngressErrorsEnv {
  return parseEnv(IngressErrorsEnvSchema, env);
}
