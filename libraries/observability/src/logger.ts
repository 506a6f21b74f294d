import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type { PinoPretty as PinoPrettyFactory } from 'pino-pretty';

// pino-pretty (and its dependencies) load only when a terminal asks for it: every service would
// otherwise pay for it at start (about a tenth of the ingress error backend's start-up CPU).
const requirePretty = (): typeof PinoPrettyFactory => (createRequire(import.meta.url)('pino-pretty') as { PinoPretty: typeof PinoPrettyFactory }).PinoPretty;

/** Header and field paths that may carry credentials; pino replaces them before a line is written. */
const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-service-core-authorization"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-service-core-authorization"]',
  'authorization',
  'token',
  '*.token',
  'resourceToken',
];

/** Anything shaped like a JWT (three base64url segments); scrubbed from free-text messages too. */
const TOKEN_SHAPE = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

function scrubTokens(text: string): string {
  return text.replace(TOKEN_SHAPE, '[REDACTED]');
}

interface LoggerOptions {
  level: string;
  name: string;
  /** Where lines go. @defaultValue stdout, asynchronously (or pretty-printed with `pretty`) */
  destination?: pino.DestinationStream;
  /**
   * Human-readable lines (pino-pretty) instead of JSON; for a person watching a terminal, never for
   * a log collector. Redaction happens before formatting, so it applies all the same. @defaultValue false
   */
  pretty?: boolean;
}

/**
 * The process logger. JSON lines; secrets are redacted by path and by shape. By default lines go to
 * stdout asynchronously: under load, lines written while a write is in flight leave in one syscall
 * (a synchronous write per line cost an API process several per cent of its CPU). pino flushes what is
 * buffered when the process exits.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level,
      redact: { paths: REDACTED_PATHS, censor: '[REDACTED]' },
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubTokens(a) : a)) as Parameters<typeof method>;
          method.apply(this, scrubbed);
        },
      },
      formatters: {
        log(object) {
          const err = object.err as { message?: string; stack?: string } | undefined;
          if (err && typeof err === 'object') {
            return { ...object, err: { ...err, message: scrubTokens(String(err.message ?? '')), stack: scrubTokens(String(err.stack ?? '')) } };
          }
          return object;
        },
      },
    },
    options.destination ?? (options.pretty ? requirePretty()({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) : pino.destination({ dest: 1, sync: false })),
  );
}
