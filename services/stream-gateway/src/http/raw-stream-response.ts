import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { chunkOf, encodeFrame } from '../domain/encoded-frame.ts';
import { endAndClose } from './socket-close.ts';

/**
 * The response side of a stream GET that the gateway reads off the socket itself (see
 * stream-front.ts): the part of Node's `ServerResponse` the stream routes use, written straight to
 * the socket. A body without a length (a stream) is sent in chunked transfer encoding, as Node's
 * server sends it, so a client can tell a stream that ended from a connection that broke; the
 * connection closes with the response (`Connection: close`), fully, once its bytes are out or after
 * `lingerMs` (see socket-close.ts).
 *
 * What it holds per open stream is this object, its headers until they are sent, and the socket;
 * Node's server would hold a request, a response, an HTTP parser (with its native half) and their
 * listeners for the life of every stream.
 */
const LAST_CHUNK = '0\r\n\r\n';

export class RawStreamResponse extends EventEmitter {
  statusCode = 200;
  /** True once a head without Content-Length is out: the body goes as chunks. */
  chunkedEncoding = false;
  private headers: Map<string, [string, string]> | undefined = new Map();
  private sent = false;
  private ended = false;

  constructor(
    readonly socket: Socket,
    readonly req: { method: string },
    private readonly lingerMs: number,
  ) {
    super();
    socket.once('close', () => {
      this.ended = true;
      this.emit('close');
    });
    socket.on('drain', () => this.emit('drain'));
  }

  get headersSent(): boolean {
    return this.sent;
  }

  get writableEnded(): boolean {
    return this.ended;
  }

  get destroyed(): boolean {
    return this.socket.destroyed;
  }

  get writableNeedDrain(): boolean {
    return this.socket.writableNeedDrain;
  }

  get writableLength(): number {
    return this.socket.writableLength;
  }

  setHeader(name: string, value: string | number): this {
    if (this.sent) throw new Error('headers already sent');
    this.headers!.set(name.toLowerCase(), [name, String(value)]);
    return this;
  }

  getHeader(name: string): string | undefined {
    return this.headers?.get(name.toLowerCase())?.[1];
  }

  writeHead(status: number, headers: Record<string, string> = {}): this {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers)) this.setHeader(name, value);
    return this;
  }

  /** Sends the status line and headers now. */
  flushHeaders(): void {
    if (this.sent) return;
    this.sent = true;
    let head = `HTTP/1.1 ${this.statusCode} ${STATUS_CODES[this.statusCode] ?? 'Unknown'}\r\n`;
    for (const [name, value] of this.headers!.values()) head += `${name}: ${value}\r\n`;
    this.chunkedEncoding = !this.headers!.has('content-length');
    if (this.chunkedEncoding) head += 'Transfer-Encoding: chunked\r\n';
    head += `Date: ${new Date().toUTCString()}\r\nConnection: close\r\n\r\n`;
    this.headers = undefined;
    this.socket.write(head, 'latin1');
  }

  write(chunk: string | Buffer): boolean {
    this.flushHeaders();
    return this.socket.write(this.framed(chunk));
  }

  /** Ends the response (after `chunk`, if any) and the connection with it. */
  end(chunk?: string | Buffer): this {
    if (this.ended) return this;
    this.flushHeaders();
    this.ended = true;
    if (chunk !== undefined && chunk.length > 0) this.socket.write(this.framed(chunk));
    endAndClose(this.socket, this.lingerMs, this.chunkedEncoding ? LAST_CHUNK : undefined);
    this.emit('finish');
    return this;
  }

  /** `chunk` as the body's bytes: one chunk of the chunked encoding, or as is. */
  private framed(chunk: string | Buffer): string | Buffer {
    if (!this.chunkedEncoding) return chunk;
    // An empty chunk would end the body.
    if (chunk.length === 0) return Buffer.alloc(0);
    return typeof chunk === 'string' ? encodeFrame(chunk, true) : chunkOf(chunk);
  }

  destroy(): this {
    this.ended = true;
    this.socket.destroy();
    return this;
  }
}
