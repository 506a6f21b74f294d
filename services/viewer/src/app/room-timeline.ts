import { batch, signal } from '@preact/signals';
import { ChatApiError, ChatStreamError, type ChatClient, type ChatEventStream, type MessageResponse, type RoomMessageEvent, type RoomRef, type RoomResponse, type StreamStatus } from '@chat/client';

/** The largest page the API gives. */
const PAGE_SIZE = 200;
/** Messages rendered at first, and added by each "load older". */
export const WINDOW_STEP = 100;

export type TimelinePhase = 'loading' | 'ready' | 'failed';

/**
 * One room on screen: its metadata, its messages oldest first, and the live stream. History is
 * read page by page, oldest first as the API gives it; the stream then starts at the last page's
 * start, so every message that lands during or after the walk arrives through it, and the overlap
 * is dropped by message ID (a reconnect may also replay its last event, spec 6 rule 7).
 */
export class RoomTimeline {
  readonly room = signal<RoomResponse | undefined>(undefined);
  readonly messages = signal<readonly MessageResponse[]>([]);
  /** Index of the first message rendered; "load older" moves it back. */
  readonly windowStart = signal(0);
  readonly phase = signal<TimelinePhase>('loading');
  readonly loadedCount = signal(0);
  readonly connection = signal<StreamStatus | undefined>(undefined);
  readonly failure = signal<Error | undefined>(undefined);
  private readonly ids = new Set<string>();
  private stream: ChatEventStream<RoomMessageEvent> | undefined;
  private resumeCursor: string | undefined;
  private closed = false;

  constructor(
    private readonly client: ChatClient,
    readonly ref: RoomRef,
    private readonly hooks: {
      /** A message that arrived live (not from history). */
      onLive(message: MessageResponse): void;
      /** The stream stopped for good because access is gone or refused. */
      onAccessLost(error: Error): void;
    },
  ) {}

  async open(): Promise<void> {
    try {
      this.room.value = await this.client.getRoom(this.ref);
      const loaded: MessageResponse[] = [];
      let cursor: string | undefined;
      let tailStart: string | undefined;
      for (;;) {
        const page = await this.client.listMessages(this.ref, { limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
        if (this.closed) return;
        if (page.items.length > 0) {
          tailStart = cursor;
          for (const message of page.items) if (!this.ids.has(message.messageId)) (this.ids.add(message.messageId), loaded.push(message));
          this.loadedCount.value = loaded.length;
        } else if (cursor) tailStart = cursor;
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      batch(() => {
        this.messages.value = loaded;
        this.windowStart.value = Math.max(0, loaded.length - WINDOW_STEP);
        this.phase.value = 'ready';
      });
      this.resumeCursor = tailStart;
      // A sealed room that was never written to cannot be materialized, so it has no stream (spec 3).
      const room = this.room.value;
      if (room.state === 'sealed' && !room.persisted) return;
      void this.follow();
    } catch (error) {
      if (this.closed) return;
      this.failure.value = error as Error;
      this.phase.value = 'failed';
      if (isAccessError(error)) this.hooks.onAccessLost(error as Error);
    }
  }

  /** Adds a message (from the stream or from this tab's own append) unless it is already here. */
  add(message: MessageResponse, live: boolean): void {
    if (this.ids.has(message.messageId)) return;
    this.ids.add(message.messageId);
    this.messages.value = [...this.messages.value, message];
    if (live) this.hooks.onLive(message);
  }

  /** Follows the room live until closed; a stop for another reason than access can be restarted. */
  async follow(): Promise<void> {
    if (this.closed) return;
    this.failure.value = undefined;
    const stream = this.client.streamRoom(
      { ...this.ref, lastEventId: this.resumeCursor ?? null },
      { onStatus: (status) => (this.connection.value = status) },
    );
    this.stream = stream;
    try {
      await stream.run((event) => this.add(event.data, true));
    } catch (error) {
      if (this.closed) return;
      this.failure.value = error as Error;
      if (isAccessError(error)) this.hooks.onAccessLost(error as Error);
    } finally {
      this.resumeCursor = stream.cursor ?? this.resumeCursor;
    }
  }

  /** Shows {@link WINDOW_STEP} more of the older messages already read. */
  loadOlder(): void {
    this.windowStart.value = Math.max(0, this.windowStart.value - WINDOW_STEP);
  }

  /** Makes sure `messageId` is rendered; false when the room has no such message. */
  reveal(messageId: string): boolean {
    const index = this.messages.value.findIndex((m) => m.messageId === messageId);
    if (index === -1) return false;
    if (index < this.windowStart.value) this.windowStart.value = Math.max(0, index - 10);
    return true;
  }

  markSealed(): void {
    const room = this.room.value;
    if (room) this.room.value = { ...room, state: 'sealed' };
  }

  close(): void {
    this.closed = true;
    this.stream?.close();
  }
}

/** Failures that mean this person can no longer read here, so only a new sign-in can help. */
export function isAccessError(error: unknown): boolean {
  if (error instanceof ChatApiError) return error.status === 401 || error.status === 403;
  if (error instanceof ChatStreamError) {
    if (error.reason === 'reauthorize_denied' || error.reason === 'reauthorize_repeated' || error.reason === 'token_unavailable') return true;
    return error.reason === 'rejected' && isAccessError(error.cause);
  }
  return false;
}
