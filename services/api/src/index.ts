export { createApiApp } from './app.ts';
export { createApiRuntime, type ApiRuntime, type ApiRuntimeOptions } from './runtime.ts';
export { ApiEnvSchema, parseEnv, type ApiEnv } from './config.ts';
export type { ApiDeps } from './deps.ts';
export type { AppendRateLimiter, AppendRateKey } from './domain/append-rate-limiter.ts';
export { InProcessRateLimiter } from './domain/in-process-rate-limiter.ts';
