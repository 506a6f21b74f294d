import type { z } from 'zod';

/** A bad environment: the message names every bad variable, so an operator can act on it. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * What every placeholder of the Secret template (`infra/k8s/secrets/secret.example.yaml`) contains.
 * A value that contains it was copied from the template, never set: it is refused at start, since
 * a template value is public (a cursor key anyone can sign with, a password anyone can read).
 */
export const PLACEHOLDER_MARK = 'REPLACE_ME';

/**
 * The variables of `schema` whose value in `env` is a placeholder. Only the message names them:
 * the value itself never reaches a log.
 */
function placeholderProblems(schema: z.ZodType, env: NodeJS.ProcessEnv): string[] {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  if (shape === undefined) return [];
  return Object.keys(shape)
    .filter((variable) => env[variable]?.includes(PLACEHOLDER_MARK))
    .map((variable) => `${variable}: holds a placeholder of the Secret template (${PLACEHOLDER_MARK}); set the real value in the secret manager`);
}

/**
 * Parses the environment. On a bad value, or a placeholder left from the Secret template, it throws
 * a ConfigError naming every bad variable (never its value), so a misconfigured pod fails at start
 * with a message an operator can act on.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv): z.output<S> {
  const placeholders = placeholderProblems(schema, env);
  const parsed = schema.safeParse(env);
  if (parsed.success && placeholders.length === 0) return parsed.data;
  const invalid = parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
  const named = new Set(placeholders.map((p) => p.slice(0, p.indexOf(':'))));
  // A placeholder that also fails its schema (a short token) is named once, as a placeholder.
  const problems = [...placeholders, ...invalid.filter((p) => !named.has(p.slice(0, p.indexOf(':'))))].join('; ');
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
