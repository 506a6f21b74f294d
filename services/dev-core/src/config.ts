import { z } from 'zod';

/** Service token chat presents by default (chat's `CORE_SERVICE_TOKEN` has the same default). Dev only. */
export const DEFAULT_SERVICE_TOKEN = 'dev-core-service-token';

const envSchema = z.object({
  DEV_CORE_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  DEV_CORE_HOST: z.string().min(1).default('127.0.0.1'),
  DEV_CORE_FIXTURE: z.string().min(1).optional(),
  DEV_CORE_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  DEV_CORE_SERVICE_TOKEN: z.string().min(16).default(DEFAULT_SERVICE_TOKEN),
  DEV_CORE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export interface DevCoreConfig {
  port: number;
  host: string;
  fixturePath: string | undefined;
  publicUrl: string | undefined;
  serviceToken: string;
  logLevel: z.infer<typeof envSchema>['DEV_CORE_LOG_LEVEL'];
}

/** Parses dev-core's environment once at start; a bad variable stops the process with its name. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): DevCoreConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`invalid dev-core configuration: ${problems}`);
  }
  const e = parsed.data;
  return {
    port: e.DEV_CORE_PORT,
    host: e.DEV_CORE_HOST,
    fixturePath: e.DEV_CORE_FIXTURE,
    publicUrl: e.DEV_CORE_PUBLIC_URL,
    serviceToken: e.DEV_CORE_SERVICE_TOKEN,
    logLevel: e.DEV_CORE_LOG_LEVEL,
  };
}
