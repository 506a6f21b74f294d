export { createApiRuntime, type ApiRuntime, type ApiRuntimeOptions } from './runtime.ts';
export { startApiService, type ApiServiceHooks, type RunningApiService } from './api-service.ts';
export { ApiEnvSchema, apiEnvFields, apiServiceConfigOf, loadApiConfig, type ApiConfig, type ApiServiceConfig } from './config.ts';
export type { ApiDeps } from './deps.ts';
export type { CommittedEntry, CommittedMessagePublisher } from './outbox/outbox.ts';
export { listen, type RunningHttpServer } from './http-server.ts';
export { createApiMetrics, type ApiMetrics } from './metrics.ts';
