/**
 * One stream of a load-client process in `resume` mode (sse-load-worker.ts): a plain TCP socket, like
 * the other modes, that reconnects the way the SDK's stream consumer does (clients/client,
 * event-stream.ts and backoff.ts): at once after `handoff`; after `Retry-After` plus full jitter
 * over the attempt's step on a 429 or 503 that carries one; after a full-jitter backoff (200 ms
 * doubling to 5 s) on anything else; always from the last event id it received (`Last-Event-ID`).
 * It keeps what the storm figures need ({@link ResumeRecord}) and reads each event's id, name,
 * `messageId` and `createdAt` without parsing its JSON.
 */
import { connect, type Socket } from 'node:net';
import type { ResumeRecord, StreamTarget } from './sse-load-protocol.ts';

/** The SDK's default backoff bounds and its longest wait after `Retry-After`. */
const BASE_DELAY_MS = 200;
const MAX_DELAY_MS = 5000;
const MAX_RETRY_AFTER_MS = 60_000;
/** A connection open at least this long counts as healthy: the next failure starts the backoff over. */
const HEALTHY_MS = 1000;

const HEADER_END = '\r\n\r\n';
const MESSAGE_ID = '"messageId":"';
const CREATED_AT = '"createdAt":"';

/** What the worker's totals and latency histogram hear from its streams. */
export interface ResumeHooks {
  opened(): void;
  ended(): void;
  message(): void;
  /** Commit → receipt of a message on a stream still on its first connection. */
  heldLatency(ms: number): void;
}

const quoted = (text: string, marker: string): string | undefined => {
  const at = text.indexOf(marker);
  if (at < 0) return undefined;
  const start = at + marker.length;
  const end = text.indexOf('"', start);
  return end < 0 ? undefined : text.slice(start, end);
};

export class ResumingLoadStream {
  readonly record: ResumeRecord;
  private socket: Socket | undefined;
  private lastEventId: string | undefined;
  private attempt = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private onFirstOpen: (() => void) | undefined;

  constructor(
    private readonly target: StreamTarget,
    private readonly hooks: ResumeHooks,
  ) {
    this.record = { key: target.key ?? target.url, ids: [], opens: [], caughtUp: [], ends: [], refusals: [] };
  }

  /** Connects; resolves at the first 200 (refusals are retried meanwhile, and recorded). */
  start(): Promise<void> {
    return new Promise((resolve) => {
      this.onFirstOpen = resolve;
      this.connect();
    });
  }

  /** Ends the stream for good: no reconnect follows. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket?.destroy();
  }

  get isOpen(): boolean {
    return this.socket !== undefined && this.record.opens.length > this.record.ends.length;
  }

  private connect(): void {
    if (this.stopped) return;
    const url = new URL(this.target.url);
    const socket = connect(Number(url.port), url.hostname);
    this.socket = socket;
    socket.write(
      `GET ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n` +
        `Authorization: Bearer ${this.target.token}\r\n${this.lastEventId === undefined ? '' : `Last-Event-ID: ${this.lastEventId}\r\n`}Connection: close\r\n\r\n`,
    );
    const connection = this.record.opens.length;
    let head: string | undefined = '';
    let status = 0;
    let openedAt = 0;
    let handoff = false;
    let errorCode: string | undefined;
    let frames = '';

    const onFrame = (frame: string): void => {
      // Chunk-size lines sit between frames (frames carry no CR); lines of other names are skipped.
      let id: string | undefined;
      let event: string | undefined;
      let data: string | undefined;
      for (const line of frame.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (event === 'handoff') {
        handoff = true;
        socket.destroy();
        return;
      }
      if (event !== 'message' || data === undefined) return;
      const messageId = quoted(data, MESSAGE_ID);
      const createdAt = Date.parse(quoted(data, CREATED_AT) ?? '');
      if (id !== undefined) this.lastEventId = id;
      if (messageId === undefined) return;
      const now = Date.now();
      this.record.ids.push(messageId);
      this.hooks.message();
      if (connection === 0) this.hooks.heldLatency(now - createdAt);
      else if (createdAt < openedAt) this.record.caughtUp[connection] = now;
    };

    const onBody = (text: string): void => {
      frames += text;
      for (let end = frames.indexOf('\n\n'); end >= 0; end = frames.indexOf('\n\n')) {
        onFrame(frames.slice(0, end));
        frames = frames.slice(end + 2);
      }
    };

    socket.on('data', (chunk: Buffer) => {
      if (head === undefined) return onBody(chunk.toString('latin1'));
      head += chunk.toString('latin1');
      const end = head.indexOf(HEADER_END);
      if (end < 0) return;
      status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      if (status !== 200) return; // a refusal: its envelope follows; read until the server closes
      const rest = head.slice(end + HEADER_END.length);
      head = undefined;
      openedAt = Date.now();
      this.record.opens.push(openedAt);
      this.record.caughtUp.push(openedAt);
      this.hooks.opened();
      this.onFirstOpen?.();
      this.onFirstOpen = undefined;
      if (rest.length > 0) onBody(rest);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      errorCode = err.code ?? err.message;
    });
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
      const now = Date.now();
      if (status === 200) {
        this.record.ends.push({ at: now, handoff });
        this.hooks.ended();
        if (now - openedAt >= HEALTHY_MS) this.attempt = 0;
        if (handoff) this.connect();
        else this.retryAfter(this.backoff());
        return;
      }
      const retryAfter = head === undefined ? undefined : /\r\nretry-after:\s*(\d+)/i.exec(head)?.[1];
      const code = head === undefined ? undefined : /"code":"([A-Z_]+)"/.exec(head)?.[1];
      const what = status === 0 ? `network ${errorCode ?? 'closed'}` : `${status}${code === undefined ? '' : ` ${code}`}${retryAfter === undefined ? ' without Retry-After' : ''}`;
      this.record.refusals.push({ at: now, what });
      const transient = status === 429 || status === 503;
      this.retryAfter(transient && retryAfter !== undefined ? Math.min(MAX_RETRY_AFTER_MS, Number(retryAfter) * 1000 + this.backoff()) : this.backoff());
    });
  }

  /** Full jitter over the attempt's step, and the next attempt's step doubled. */
  private backoff(): number {
    const step = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** Math.min(this.attempt, 30));
    this.attempt += 1;
    return Math.round(Math.random() * step);
  }

  private retryAfter(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.connect(), ms);
  }
}
