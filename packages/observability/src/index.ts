export { createLogger, scrubTokens, REDACTED_PATHS } from './logger.ts';
export type { Logger } from 'pino';
