export { createLogger } from './logger.ts';
export { startAdminServer, type AdminServer, type ReadinessCheck } from './admin-server.ts';
export { createCoreCallHistogram, createHttpDurationHistogram } from './http-metrics.ts';
export type { Logger } from 'pino';
export { registerPoolMetrics, type PoolOccupancy } from './pool-metrics.ts';
