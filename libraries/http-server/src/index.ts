export { createLimitedServer, DEFAULT_HTTP_SERVER_LIMITS, type HttpServerLimits } from './http-server-limits.ts';
export { stopOnSignals, type ClosableAdminServer, type ShutdownLogger } from './static-server-shutdown.ts';
export { connectionRoom } from './connection-room.ts';
