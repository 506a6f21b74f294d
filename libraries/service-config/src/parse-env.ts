import type { z } from 'zod';

/** A bad environment: the message names every bad variable, so an operator can act on it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Parses the environment. On a bad value it throws a ConfigError naming every bad variable, so a
 * misconfigured pod fails at start with a message an operator can act on.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`).join('; ');
  throw new ConfigError(`Invalid configuration: ${problems}`);
}

/** Parses the environment with `schema`, then shapes it with `build` into the service's nested config. */
export function loadConfig<S extends z.ZodType, C>(schema: S, env: NodeJS.ProcessEnv, build: (parsed: z.output<S>) => C): C {
  return build(parseEnv(schema, env));
}

/**
 * Runs a service's config loader at start; on a bad environment writes the message to stderr and
 * exits with status 2 (before any logger exists, stderr is the one place to say why).
 */
export function loadConfigOrExit<C>(load: () => C): C {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
}
