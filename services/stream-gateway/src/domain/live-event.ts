import { EncodedFrame } from './encoded-frame.ts';
import { durableFrame } from './sse-frame.ts';
import type { StreamSource } from './stream-source.ts';

/**
 * One live backbone event as the hub hands it to every stream of its scope. The SSE frame of a
 * source that sends the payload as published (no `fromLive`) is the same bytes for every stream of
 * the scope, so the first stream that sends it builds and encodes it and the rest write the same
 * buffer: one cursor MAC, one framing, one UTF-8 encoding and one chunk header per event instead of
 * per stream.
 */
export class LiveEvent {
  private frame: EncodedFrame | undefined;

  constructor(
    readonly seq: number,
    /** The backbone payload (JSON). */
    readonly payload: string,
  ) {}

  /** The encoded frame for a source without `fromLive`; built once, shared by every stream of the scope. */
  sharedFrame(source: StreamSource): EncodedFrame {
    this.frame ??= new EncodedFrame(Buffer.from(durableFrame(source.cursorFor(this.seq), source.eventName, this.payload), 'utf8'));
    return this.frame;
  }
}
