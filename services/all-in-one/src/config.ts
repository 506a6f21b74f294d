import { ApiEnvSchema } from '@chat/api';
import { parseEnv } from '@chat/service-config';
import { GatewayEngineEnvSchema } from '@chat/stream-gateway';
import { z } from 'zod';

const flag = z.enum(['true', 'false']).transform((v) => v === 'true');

/** The all-in-one process: the API's and the gateway's settings, plus the embedded dev-core's and the demo output. */
export const AllInOneEnvSchema = ApiEnvSchema.extend(GatewayEngineEnvSchema.shape).extend({
  /** Port of the embedded dev-core (0 picks a free one). Unused when CORE_URL is set. @defaultValue 8081 */
  DEV_CORE_PORT: z.coerce.number().int().min(0).max(65_535).default(8081),
  /** Fixture file of the embedded dev-core. @defaultValue the bundled demo fixture */
  DEV_CORE_FIXTURE: z.string().min(1).optional(),
  /** Print demo tokens at start (only with the embedded dev-core). @defaultValue true */
  PRINT_DEMO_TOKENS: flag.default(true),
});

export type AllInOneConfig = z.infer<typeof AllInOneEnvSchema>;

export function loadAllInOneConfig(env: NodeJS.ProcessEnv): AllInOneConfig {
  return parseEnv(AllInOneEnvSchema, env);
}
