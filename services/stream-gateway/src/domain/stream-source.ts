import type { Channel } from '@chat/backbone';

/** One durable item of a stream, as stored: its per-scope sequence and its JSON wire form. */
export interface SourceItem {
  seq: number;
  /** JSON of the event's data (a MessageResponse for rooms, a NotificationResponse for inboxes). */
  data: string;
  /**
   * The part of a partitioned scope the item belongs to (a principal feed's: the notification's
   * repository), which decides per stream whether the item is sent; absent for unpartitioned scopes.
   */
  partition?: string;
}

/**
 * What a stream reads from: a scope with a contiguous per-scope sequence, durable in the store and
 * announced on one backbone channel. The engine is generic over it, so room streams and inbox
 * streams share listener-first registration, replay, overlap suppression and the scope's orderer.
 */
export interface StreamSource {
  /** Backbone channel that announces new items of this scope. */
  readonly channel: Channel;
  /** The backbone event's `scopeKey` for this scope (room id, inbox key). */
  readonly scopeKey: string;
  /** SSE event name of durable items. */
  readonly eventName: 'message' | 'notification';
  /** Highest committed seq of the scope right now (0 when empty): the snapshot barrier. */
  highWater(): Promise<number>;
  /**
   * Items with seq greater than `afterSeq`, oldest first, at most `limit`. The array may be shared
   * between streams: read it, never change it. The scope's orderer fills gaps through the source of
   * the scope's first stream, and every stream of the scope sends what that read returns.
   */
  readAfter(afterSeq: number, limit: number): Promise<SourceItem[]>;
  /**
   * The durable cursor of the item with this seq (its SSE id). It must depend on the scope and seq
   * alone: the streams of one scope share the frame of each event the orderer read from the store,
   * and without `fromLive` of every live event too.
   */
  cursorFor(seq: number): string;
  /**
   * Turns a live backbone payload into the event's data, when the two differ (an inbox's payload is
   * the stored Notification; the event carries a NotificationResponse). Absent: sent as published.
   */
  fromLive?(seq: number, payload: string): string;
  /**
   * The partition of a live backbone payload, for a partitioned scope (see {@link SourceItem.partition}).
   * Read once per event for all the streams of the scope (`LiveEvent.partitionIn`), and only
   * by streams that filter by partition.
   */
  partitionOf?(payload: string): string;
}
