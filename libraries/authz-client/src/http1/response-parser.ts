import { parseResponseHead, type ResponseHead } from './response-head.ts';

/** A whole HTTP/1.1 answer, and whether its connection may carry another request. */
export interface ParsedResponse {
  status: number;
  text: string;
  /** False after `Connection: close`, an HTTP/1.0 answer, a body read until close, or bytes past the answer. */
  reusable: boolean;
  /** The server's `Keep-Alive: timeout=` in milliseconds, when it sent one. */
  keepAliveMs: number | undefined;
}

interface ResponseLimits {
  /** Status line and header fields together (and the trailer section likewise). */
  maxHeadBytes: number;
  maxBodyBytes: number;
}

/** A chunk-size line is a few hex digits; extensions are allowed but nothing legitimate makes them long. */
const MAX_CHUNK_LINE_BYTES = 4096;
const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

const enum State {
  Head,
  FixedBody,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

/**
 * Reads one response incrementally from whatever pieces the socket delivers (a byte at a time works
 * as well as the whole answer at once). Interim 1xx answers are skipped. Anything malformed or over a
 * limit throws a plain Error; the connection must then be destroyed.
 */
export class ResponseParser {
  private state = State.Head;
  /** Bytes received but not consumed yet: a partial head, chunk-size line or trailer line. */
  private carried: Buffer | undefined;
  private head: ResponseHead | undefined;
  private readonly body: Buffer[] = [];
  private bodyBytes = 0;
  /** Bytes left of the fixed-length body or of the current chunk. */
  private remaining = 0;
  private trailerBytes = 0;
  private trailing = false;
  private untilClose = false;

  constructor(
    private readonly limits: ResponseLimits,
    /** A HEAD request's answer has no body whatever its headers say. */
    private readonly headRequest: boolean,
  ) {}

  /** True once any part of an answer (even a 1xx) arrived. */
  get started(): boolean {
    return this.state !== State.Head || this.carried !== undefined || this.head !== undefined;
  }

  /** Consumes a piece of the answer; returns the answer once complete, else undefined. */
  push(chunk: Buffer): ParsedResponse | undefined {
    let data = chunk;
    if (this.carried !== undefined) {
      data = Buffer.concat([this.carried, chunk]);
      this.carried = undefined;
    }
    let offset = 0;
    while (offset < data.length) {
      switch (this.state) {
        case State.Head:
          offset = this.readHead(data, offset);
          break;
        case State.FixedBody:
        case State.ChunkData:
          offset = this.readBody(data, offset);
          break;
        case State.ChunkSize:
        case State.ChunkDataEnd:
        case State.Trailers:
          offset = this.readChunkLine(data, offset);
          break;
        case State.UntilClose:
          this.append(data.subarray(offset));
          offset = data.length;
          break;
        case State.Done:
          // Bytes past the answer: nothing was asked for them, so the connection cannot be trusted.
          this.trailing = true;
          offset = data.length;
          break;
      }
      if (offset < 0) return undefined;
    }
    return this.state === State.Done ? this.response() : undefined;
  }

  /** The connection ended cleanly: completes an answer read until close, else throws. */
  end(): ParsedResponse {
    if (this.state === State.UntilClose) {
      this.state = State.Done;
      return this.response();
    }
    if (this.state === State.Done) return this.response();
    throw new Error(this.started ? 'core closed the connection in the middle of its answer' : 'core closed the connection without answering');
  }

  /** Returns the new offset, or -1 after carrying a partial head over to the next piece. */
  private readHead(data: Buffer, offset: number): number {
    const end = data.indexOf(HEAD_END, offset);
    if (end === -1 || end + 4 - offset > this.limits.maxHeadBytes) {
      if (end !== -1 || data.length - offset > this.limits.maxHeadBytes) {
        throw new Error(`core's answer head is over ${this.limits.maxHeadBytes} bytes`);
      }
      return this.carry(data, offset);
    }
    const head = parseResponseHead(data.toString('latin1', offset, end));
    this.head = head;
    if (head.status < 200) {
      if (head.status === 101) throw new Error('core answered 101 Switching Protocols to a plain request');
      return end + 4;
    }
    const framing = this.headRequest || head.status === 204 || head.status === 304 ? { kind: 'none' as const } : head.framing;
    switch (framing.kind) {
      case 'none':
        this.state = State.Done;
        break;
      case 'length':
        if (framing.length > this.limits.maxBodyBytes) throw new Error(`core's answer declares ${framing.length} bytes, over the ${this.limits.maxBodyBytes} allowed`);
        this.remaining = framing.length;
        this.state = framing.length === 0 ? State.Done : State.FixedBody;
        break;
      case 'chunked':
        this.state = State.ChunkSize;
        break;
      case 'until-close':
        this.untilClose = true;
        this.state = State.UntilClose;
        break;
    }
    return end + 4;
  }

  private readBody(data: Buffer, offset: number): number {
    const take = Math.min(this.remaining, data.length - offset);
    this.append(offset === 0 && take === data.length ? data : data.subarray(offset, offset + take));
    this.remaining -= take;
    if (this.remaining === 0) this.state = this.state === State.FixedBody ? State.Done : State.ChunkDataEnd;
    return offset + take;
  }

  /** A chunk-size line, the CRLF after a chunk's data, or a trailer line; -1 when the line is incomplete. */
  private readChunkLine(data: Buffer, offset: number): number {
    const end = data.indexOf(CRLF, offset);
    const limit = this.state === State.Trailers ? this.limits.maxHeadBytes - this.trailerBytes : MAX_CHUNK_LINE_BYTES;
    if (end === -1 || end + 2 - offset > limit) {
      if (end !== -1 || data.length - offset > limit) {
        throw new Error(this.state === State.Trailers ? `core's answer trailers are over ${this.limits.maxHeadBytes} bytes` : "core's answer has an overlong chunk line");
      }
      return this.carry(data, offset);
    }
    const line = data.toString('latin1', offset, end);
    if (this.state === State.ChunkDataEnd) {
      if (line !== '') throw new Error("core's chunked answer has bytes after a chunk's data");
      this.state = State.ChunkSize;
    } else if (this.state === State.ChunkSize) {
      const size = parseChunkSize(line);
      if (this.bodyBytes + size > this.limits.maxBodyBytes) throw new Error(`core's answer is over ${this.limits.maxBodyBytes} bytes`);
      this.remaining = size;
      this.state = size === 0 ? State.Trailers : State.ChunkData;
    } else {
      this.trailerBytes += end + 2 - offset;
      if (line === '') this.state = State.Done;
      else if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+:/.test(line)) throw new Error("core's answer has a malformed trailer field");
    }
    return end + 2;
  }

  private carry(data: Buffer, offset: number): number {
    // A copy, so the socket's (possibly large) read buffer is not retained for a few bytes.
    this.carried = Buffer.from(data.subarray(offset));
    return -1;
  }

  private append(bytes: Buffer): void {
    this.bodyBytes += bytes.length;
    if (this.bodyBytes > this.limits.maxBodyBytes) throw new Error(`core's answer is over ${this.limits.maxBodyBytes} bytes`);
    this.body.push(bytes);
  }

  private response(): ParsedResponse {
    const head = this.head!;
    const text = this.body.length === 0 ? '' : this.body.length === 1 ? this.body[0]!.toString('utf8') : Buffer.concat(this.body, this.bodyBytes).toString('utf8');
    return {
      status: head.status,
      text,
      reusable: head.keepAlive && !this.trailing && !this.untilClose,
      keepAliveMs: head.keepAliveMs,
    };
  }
}

/** `1a3f`, optionally followed by `;name=value` extensions (which are ignored). */
function parseChunkSize(line: string): number {
  const match = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;.*)?$/.exec(line);
  if (match === null) throw new Error(`core's chunked answer has a malformed chunk size ${JSON.stringify(line.slice(0, 40))}`);
  return parseInt(match[1]!, 16);
}
