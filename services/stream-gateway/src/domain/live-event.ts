import type { DeliverySpan } from '@chat/tracing';
import { commitTimeOf } from './commit-time.ts';
import { EncodedFrame } from './encoded-frame.ts';
import { durableFrame } from './sse-frame.ts';
import type { StreamSource } from './stream-source.ts';

/**
 * One event of a scope as its orderer hands it to every stream of the scope: from the backbone, or
 * read from the store to fill a gap. The SSE frame of a source that sends the payload as published
 * (no `fromLive`), and of any event read from the store, is the same bytes for every stream of the
 * scope, so the first stream that sends it builds and encodes it and the rest write the same buffer:
 * one cursor MAC, one framing, one UTF-8 encoding and one chunk header per event instead of per
 * stream.
 */
export class LiveEvent {
  private frame: EncodedFrame | undefined;

  constructor(
    readonly seq: number,
    /** The event's JSON: the backbone payload, or (`fromStore`) the data as the store serves it. */
    readonly payload: string,
    /** Read from the store by a gap fill: the payload is already the event's data, so `fromLive` does not apply. */
    readonly fromStore = false,
    /** The item's partition when read from the store; a live one's is read on first use ({@link partitionIn}). */
    private partition?: string,
    /** This gateway's delivery span of the event (tracing on, the event traced); ended once its fanout is done. */
    readonly delivery?: DeliverySpan,
  ) {}

  /**
   * The partition of the event in a partitioned scope (a principal feed: its repository): read from
   * the payload by the first stream that filters by partition, and shared by the scope's other streams,
   * so a payload is parsed for it once. Streams that do not filter never ask.
   */
  partitionIn(source: Pick<StreamSource, 'partitionOf'>): string | undefined {
    if (this.partition === undefined && !this.fromStore) this.partition = source.partitionOf?.(this.payload);
    return this.partition;
  }

  /** The event's commit time (epoch ms), read from its payload; asked once per event, for the delivery latency. */
  committedAtMs(): number | undefined {
    return commitTimeOf(this.payload);
  }

  /** The encoded frame of the payload as the event's data; built once, shared by every stream of the scope. */
  sharedFrame(source: StreamSource): EncodedFrame {
    this.frame ??= new EncodedFrame(Buffer.from(durableFrame(source.cursorFor(this.seq), source.eventName, this.payload), 'utf8'));
    return this.frame;
  }
}
