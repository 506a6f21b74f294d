import { request, type IncomingMessage } from 'node:http';
import type { ApiResponse } from './api-client.ts';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

/** How one SSE connection ended. */
export type StreamEnd = 'ended' | 'broken' | 'closed-by-client';

export interface SseConnection {
  /** HTTP status of the answer. */
  status: number;
  headers: IncomingMessage['headers'];
  /** The raw body of a non-200 answer. */
  errorBody: string;
  /** Resolves when the stream is over (immediately for non-200 answers). */
  done: Promise<StreamEnd>;
  /** Events parsed by eventsource-parser so far, in arrival order. */
  events: EventSourceMessage[];
  /** The raw bytes received so far, for framing checks (kept only when asked). */
  raw: Buffer[];
  close(): void;
  /** Stops reading from the socket (the server sees a slow consumer). */
  pause(): void;
  resume(): void;
}

export interface OpenSseOptions {
  headers?: Record<string, string>;
  /** Called for every parsed event. */
  onEvent?: (event: EventSourceMessage) => void;
  /** Keep the raw body bytes in `raw`. @defaultValue false */
  keepRaw?: boolean;
  /** Socket receive buffer hint: the smaller, the sooner a paused client backs the server up. */
  highWaterMark?: number;
}

/**
 * Opens one SSE stream over node:http (its own socket, no pooling) and parses it with the independent
 * eventsource-parser. Rejects only when no answer arrives at all (refused, reset before headers).
 */
export function openSse(url: string, token: string | undefined, options: OpenSseOptions = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      agent: false,
      headers: {
        accept: 'text/event-stream',
        connection: 'close',
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...options.headers,
      },
      ...(options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark }),
    });
    let answered = false;
    let closedByClient = false;
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    req.on('response', (res) => {
      answered = true;
      const events: EventSourceMessage[] = [];
      const raw: Buffer[] = [];
      let errorBody = '';
      let settle: (end: StreamEnd) => void = () => undefined;
      const done = new Promise<StreamEnd>((r) => {
        let settled = false;
        settle = (end) => {
          if (settled) return;
          settled = true;
          r(closedByClient ? 'closed-by-client' : end);
        };
      });
      const connection: SseConnection = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        get errorBody() {
          return errorBody;
        },
        done,
        events,
        raw,
        close() {
          closedByClient = true;
          req.destroy();
          settle('closed-by-client');
        },
        pause: () => res.pause(),
        resume: () => res.resume(),
      };
      if (res.statusCode !== 200) {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (errorBody += chunk));
        res.on('end', () => {
          settle('ended');
          resolve(connection);
        });
        res.on('error', () => settle('broken'));
        return;
      }
      const parser = createParser({
        onEvent: (event) => {
          events.push(event);
          options.onEvent?.(event);
        },
      });
      const decoder = new TextDecoder('utf-8');
      res.on('data', (chunk: Buffer) => {
        if (options.keepRaw) raw.push(chunk);
        parser.feed(decoder.decode(chunk, { stream: true }));
      });
      res.on('end', () => settle('ended'));
      res.on('aborted', () => settle('broken'));
      res.on('error', () => settle('broken'));
      res.on('close', () => settle(res.complete ? 'ended' : 'broken'));
      resolve(connection);
    });
    req.end();
  });
}

/** A refused stream's answer in the API client's shape, so the OpenAPI validator can check it. */
export function refusalAsApiResponse(connection: SseConnection): ApiResponse {
  let body: unknown;
  try {
    body = JSON.parse(connection.errorBody);
  } catch {
    body = undefined;
  }
  const requestId = connection.headers['x-request-id'];
  return { status: connection.status, headers: connection.headers, text: connection.errorBody, body, requestId: Array.isArray(requestId) ? requestId[0] : requestId };
}
