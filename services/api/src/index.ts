export { createApiApp } from './app.ts';
export { createApiRuntime, type ApiRuntime, type ApiRuntimeOptions } from './runtime.ts';
export { ApiEnvSchema, parseEnv, type ApiEnv } from './config.ts';
export type { ApiDeps } from './deps.ts';
export type { AppendRateLimiter, AppendRateKey } from './domain/append-rate-limiter.ts';
export { createRateLimiter } from './rate-limiter.ts';
export { listen, type RunningHttpServer } from './http-server.ts';
