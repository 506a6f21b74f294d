import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { encodeFrame, type EncodedFrame } from './encoded-frame.ts';

/** Bounds of what may wait in one connection's send buffer. */
export interface OutputLimits {
  /** Events written while the client is not reading. @defaultValue 1000 */
  maxEvents: number;
  /** Bytes buffered for the client (Node's buffer and the socket's). @defaultValue 1048576 */
  maxBytes: number;
}

/** Sockets corked by `corkForThisTurn`, all uncorked by one `process.nextTick`. */
const corkedSockets: Socket[] = [];

function uncorkAll(): void {
  const sockets = corkedSockets.splice(0);
  for (const socket of sockets) socket.uncork();
}

/**
 * Holds a socket's writes until the current turn's synchronous work is done, as Node's own response
 * does per write (`connectionCorkNT`), but with one tick callback for every socket: a backbone reply
 * carrying several events of a room then leaves each stream in one `writev`, not one write each.
 */
function corkForThisTurn(socket: Socket): void {
  if (socket.writableCorked > 0) return;
  socket.cork();
  if (corkedSockets.push(socket) === 1) process.nextTick(uncorkAll);
}

/**
 * The write side of one SSE response. While the client is not keeping up, frames are counted, and
 * once either bound is passed `write` reports an overflow so the session can close the stream rather
 * than buffer without end. It listens for `drain` only while something waits for one, so an idle
 * stream costs no listener.
 *
 * Once the head is out (`writeDirect`), frames go straight to the socket, already framed as chunks
 * when the response is chunked: one `socket.write` of a buffer shared by the whole room per event,
 * instead of the response's four writes (chunk-size line, CRLF, frame, CRLF) and its cork per tick.
 * Every frame takes that one path, so order holds; `end` goes through the response, which writes
 * the last frame and the terminating chunk behind them on the same socket.
 */
export class SseOutput {
  /** The socket written to directly, once the head is out; until then (or for HEAD), the response. */
  private socket: Socket | undefined;
  private chunked = false;
  private backlogEvents = 0;
  private drainWaiters: Array<() => void> | undefined;
  private awaitingDrain = false;
  private ended = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: OutputLimits,
  ) {}

  /** The response written to. */
  get response(): ServerResponse {
    return this.res;
  }

  /**
   * From now on writes go straight to the socket. Call it once the response head has been flushed;
   * a response without a socket of its own yet (a pipelined one) or without a body (HEAD) keeps
   * writing through the response.
   */
  writeDirect(): void {
    const { socket } = this.res;
    if (!socket || !this.res.headersSent || this.res.req.method === 'HEAD') return;
    this.socket = socket;
    this.chunked = this.res.chunkedEncoding;
  }

  /** True while the send buffer is above its high-water mark. */
  get backedUp(): boolean {
    return (this.socket ?? this.res).writableNeedDrain;
  }

  /** Writes one frame; false when the backlog now exceeds the limits (the caller closes). */
  write(frame: string | EncodedFrame): boolean {
    if (this.ended) return true;
    const sink = this.socket ?? this.res;
    // A socket already gone: its `close` ends the session; nothing is buffered for it meanwhile.
    if (this.socket?.destroyed) return true;
    if (this.socket) corkForThisTurn(this.socket);
    // The hot path: the write fit under the high-water mark and nothing waits for a drain.
    if (sink.write(this.bytesOf(frame)) && this.backlogEvents === 0) return true;
    this.backlogEvents += 1;
    this.awaitDrain();
    return this.backlogEvents <= this.limits.maxEvents && sink.writableLength <= this.limits.maxBytes;
  }

  /** Resolves once the client has taken what was buffered (or at once when nothing waits, or when ended). */
  whenWritable(): Promise<void> {
    if (this.ended || !this.backedUp) return Promise.resolve();
    this.awaitDrain();
    return new Promise((resolve) => (this.drainWaiters ??= []).push(resolve));
  }

  /** Ends the response after `finalFrame` (if any) and releases every waiter. */
  end(finalFrame?: string): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.res.writableEnded && !this.res.destroyed) this.res.end(finalFrame);
    this.releaseWaiters();
  }

  /** Drops the connection without a clean end (an overflowing client gets nothing more). */
  destroy(): void {
    if (this.ended) return;
    this.ended = true;
    this.res.destroy();
    this.releaseWaiters();
  }

  private bytesOf(frame: string | EncodedFrame): string | Buffer {
    if (!this.socket) return typeof frame === 'string' ? frame : frame.bytes;
    if (typeof frame === 'string') return encodeFrame(frame, this.chunked);
    return this.chunked ? frame.chunk : frame.bytes;
  }

  private awaitDrain(): void {
    if (this.awaitingDrain) return;
    this.awaitingDrain = true;
    (this.socket ?? this.res).once('drain', () => {
      this.awaitingDrain = false;
      this.backlogEvents = 0;
      this.releaseWaiters();
    });
  }

  private releaseWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = undefined;
    if (waiters) for (const resolve of waiters) resolve();
  }
}
