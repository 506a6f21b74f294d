import { createLogger as createServiceLogger, type Logger } from '@chat/observability';

/**
 * dev-core's root logger, with chat's redaction: request logs carry method, path and status only,
 * since headers hold tokens and no token may reach a log line.
 */
export function createLogger(level: string = 'info'): Logger {
  return createServiceLogger({ name: 'dev-core', level });
}
