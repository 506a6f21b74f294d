import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from './span-attributes.ts';

/**
 * Marks a span failed by `err`: error status, and `error.type` as the error's code (an AppError's
 * spec code) or class name. Never its message, which may carry what a log line must not either.
 */
export function recordFailure(span: Span, err: unknown): void {
  const code = (err as { code?: unknown } | null)?.code;
  const type = typeof code === 'string' ? code : err instanceof Error ? err.name : 'unknown';
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}
