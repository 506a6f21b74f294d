import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Histogram } from 'prom-client';
import type { Logger } from '@chat/observability';

/** Who a request was authenticated as: the kind and ID its verified token speaks for, nothing of the token. */
export interface LoggedPrincipal {
  kind: string;
  id: string;
}

/**
 * One request's access-log line and latency sample, filled in by the pipeline as the request goes.
 * The line is written when the response closes (for a stream: when the stream ends) and names the
 * route template, never the raw path, headers or query string: they may hold tokens or cursors.
 */
export class AccessRecord {
  /** The caller, once its token was verified (also on a request then refused). */
  principal: LoggedPrincipal | undefined;
  /** The error envelope's code, when one was written (`RATE_LIMITED`, `STREAM_UNAVAILABLE`, ...). */
  code: string | undefined;
  private readonly started = process.hrtime.bigint();
  /** Seconds to the stream's first byte, once its head was sent; the sample was taken then. */
  private firstByteSeconds: number | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly services: { logger: Logger; httpDuration: Histogram<'operation' | 'method' | 'status'> },
    private readonly request: { method: string; route: string; requestId: string },
  ) {
    res.once('close', () => this.closed());
  }

  /**
   * A stream's head is out: its latency sample is the time to first byte, taken now, since the
   * stream itself lasts hours and its lifetime would land in the histogram's `+Inf` bucket.
   */
  firstByteSent(): void {
    if (this.firstByteSeconds !== undefined) return;
    this.firstByteSeconds = this.elapsedSeconds();
    this.observe(this.firstByteSeconds);
  }

  private closed(): void {
    const seconds = this.elapsedSeconds();
    if (this.firstByteSeconds === undefined) this.observe(seconds);
    const { logger } = this.services;
    if (!logger.isLevelEnabled('info')) return;
    const { method, route, requestId } = this.request;
    logger.info(
      {
        requestId,
        method,
        route,
        status: this.res.statusCode,
        durationMs: milliseconds(seconds),
        ...(this.firstByteSeconds === undefined ? {} : { firstByteMs: milliseconds(this.firstByteSeconds) }),
        ...(this.principal ? { principal: this.principal } : {}),
        ...(this.code ? { code: this.code } : {}),
      },
      'request',
    );
  }

  private observe(seconds: number): void {
    this.services.httpDuration.observe({ operation: this.request.route, method: this.request.method, status: String(this.res.statusCode) }, seconds);
  }

  private elapsedSeconds(): number {
    return Number(process.hrtime.bigint() - this.started) / 1e9;
  }
}

/** Milliseconds to one decimal. */
function milliseconds(seconds: number): number {
  return Math.round(seconds * 1e4) / 10;
}

/** Starts the access record of a request; see {@link AccessRecord}. */
export function logWhenClosed(
  req: IncomingMessage,
  res: ServerResponse,
  services: { logger: Logger; httpDuration: Histogram<'operation' | 'method' | 'status'> },
  request: { route: string; requestId: string },
): AccessRecord {
  return new AccessRecord(res, services, { method: req.method ?? '', ...request });
}
