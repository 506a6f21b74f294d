/**
 * The only place the cross-service tests read the environment: where the real PostgreSQL and Redis
 * live. Defaults match the developer and CI machines (trust auth on 127.0.0.1).
 */
import { fileURLToPath } from 'node:url';

function optionalUrl(name: string, fallback: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  try {
    new URL(value);
  } catch {
    throw new Error(`${name} must be a URL, got ${JSON.stringify(value)}`);
  }
  return value;
}

export const testConfig = {
  /** PostgreSQL for the `postgres` mode and the cluster test. @defaultValue postgres://postgres@127.0.0.1:5432/test */
  databaseUrl: optionalUrl('TEST_DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/test'),
  /** Redis for the `postgres` mode and the cluster test. @defaultValue redis://127.0.0.1:6379 */
  redisUrl: optionalUrl('TEST_REDIS_URL', 'redis://127.0.0.1:6379'),
  /** Seed of the concurrency test's random choices, to replay a failure. @defaultValue derived from the clock */
  concurrencySeed: process.env.CONCURRENCY_SEED ? Number(process.env.CONCURRENCY_SEED) : Date.now() % 1_000_000,
  /** The monorepo root, where the services' entry points live. */
  repoRoot: fileURLToPath(new URL('../../', import.meta.url)),
} as const;
