export { createLogger, scrubTokens, REDACTED_PATHS } from './logger.ts';
export { startAdminServer, type AdminServer, type AdminServerOptions, type ReadinessCheck } from './admin-server.ts';
export { createCoreCallHistogram, createHttpDurationHistogram } from './http-metrics.ts';
export type { Logger } from 'pino';
