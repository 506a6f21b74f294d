/**
 * The settings of the ingress's error backend (`main.ts`), read from the environment
 * once at start. It needs no store, Redis or core: it must answer when they, or the API, cannot.
 */
import { adminHostOf, adminFields, httpConfigOf, httpFields, loadConfig, logConfigOf, logFields, port, type HttpServerConfig } from '@chat/service-config';
import { z } from 'zod';

export const IngressErrorsEnvSchema = z.object({
  ...httpFields,
  ...adminFields,
  ...logFields,
  INGRESS_ERRORS_ADMIN_PORT: port.default(9093).describe("admin server port of the ingress's error backend (`/healthz`, `/readyz`, `/metrics`); 0 picks a free one"),
});

export interface IngressErrorsConfig {
  log: { level: string };
  http: HttpServerConfig;
  admin: { host: string; port: number };
}

/** Parses the environment; a bad value fails the start with every bad variable named. */
export function loadIngressErrorsConfig(env: NodeJS.ProcessEnv): IngressErrorsConfig {
  return loadConfig(IngressErrorsEnvSchema, env, (e) => ({
    log: logConfigOf(e),
    http: httpConfigOf(e),
    admin: { host: adminHostOf(e), port: e.INGRESS_ERRORS_ADMIN_PORT },
  }));
}
