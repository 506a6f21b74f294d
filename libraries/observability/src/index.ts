export { createLogger } from './logger.ts';
export { startAdminServer, type AdminServer, type ReadinessCheck } from './admin-server.ts';
export { createCoreCallHistogram, createHttpDurationHistogram } from './http-metrics.ts';
export { stopOnSignals } from './static-server-shutdown.ts';
export { createLimitedServer, DEFAULT_HTTP_SERVER_LIMITS, type HttpServerLimits } from './http-server-limits.ts';
export type { Logger } from 'pino';
