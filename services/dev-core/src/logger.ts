import { pino, type Level, type Logger } from 'pino';

/**
 * dev-core's root logger. Request logs carry method, path and status only: headers hold tokens, and
 * no token may reach a log line.
 */
export function createLogger(level: Level | 'silent' = 'info'): Logger {
  return pino({ name: 'dev-core', level, redact: ['req.headers.authorization', 'token'] });
}
