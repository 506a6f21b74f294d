import { batch, signal } from '@preact/signals';
import { ChatApiError, ChatStreamError, type ChatClient, type ChatEventStream, type MessageResponse, type RoomMessageEvent, type RoomRef, type RoomResponse, type StreamStatus } from '@chat/client';

/** The largest page the API gives. */
const PAGE_SIZE = 200;
/** Messages rendered at first, and added by each "load older". */
export const WINDOW_STEP = 100;
/** Quiet time after which a replay that has not reached the room's count is taken as complete. */
const REPLAY_QUIET_MS = 1_500;

export type TimelinePhase = 'loading' | 'ready' | 'failed';

/**
 * One room on screen: its metadata, its messages oldest first, and the live stream. The first page
 * of history comes from the list (oldest first, as the API gives it); the rest of the history and
 * everything after it come through the SDK's stream consumer started at that page's `nextCursor`,
 * as one durable replay followed by live delivery, so nothing falls between the two. The list
 * offers no way to start from the newest page, and one replay is far quicker than walking a long
 * room page by page. A reconnect may replay its last event (spec 6 rule 7): messages are kept once
 * by ID. The view stays "loading" until the replay reaches the count the room reported on opening.
 */
export class RoomTimeline {
  readonly room = signal<RoomResponse | undefined>(undefined);
  readonly messages = signal<readonly MessageResponse[]>([]);
  /** Index of the first message rendered; "load older" moves it back. */
  readonly windowStart = signal(0);
  readonly phase = signal<TimelinePhase>('loading');
  readonly loadedCount = signal(0);
  readonly expectedCount = signal(0);
  readonly connection = signal<StreamStatus | undefined>(undefined);
  readonly failure = signal<Error | undefined>(undefined);
  private readonly ids = new Set<string>();
  /** Messages received and not yet rendered: rendering happens once per batch, not per event. */
  private pending: MessageResponse[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private quietTimer: ReturnType<typeof setTimeout> | undefined;
  private progressTimer: ReturnType<typeof setTimeout> | undefined;
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
      const room = await this.client.getRoom(this.ref);
      this.room.value = room;
      this.expectedCount.value = room.messageCount;
      const first = await this.client.listMessages(this.ref, { limit: PAGE_SIZE });
      if (this.closed) return;
      for (const message of first.items) this.keep(message);
      this.resumeCursor = first.nextCursor ?? undefined;
      if (!first.nextCursor) this.ready();
      // A sealed room that was never written to cannot be materialized, so it has no stream (spec 3).
      if (room.state === 'sealed' && !room.persisted) return this.ready();
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
    if (!this.keep(message)) return;
    if (this.phase.value === 'loading') {
      // Nothing renders while the replay runs but a progress count, at most a few times a second.
      if (this.ids.size >= this.expectedCount.value) this.ready();
      else {
        this.armQuietTimer();
        this.progressTimer ??= setTimeout(() => {
          this.progressTimer = undefined;
          this.loadedCount.value = this.ids.size;
        }, 200);
      }
      return;
    }
    this.flushSoon();
    if (live) this.hooks.onLive(message);
  }

  private keep(message: MessageResponse): boolean {
    if (this.ids.has(message.messageId)) return false;
    this.ids.add(message.messageId);
    this.pending.push(message);
    return true;
  }

  private ready(): void {
    if (this.phase.value === 'ready') return;
    clearTimeout(this.quietTimer);
    clearTimeout(this.progressTimer);
    batch(() => {
      this.flush();
      this.windowStart.value = Math.max(0, this.messages.value.length - WINDOW_STEP);
      this.loadedCount.value = this.ids.size;
      this.phase.value = 'ready';
    });
  }

  private armQuietTimer(): void {
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => this.ready(), REPLAY_QUIET_MS);
  }

  private flushSoon(): void {
    this.flushTimer ??= setTimeout(() => this.flush(), 0);
  }

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.pending.length === 0) return;
    const added = this.pending;
    this.pending = [];
    this.messages.value = this.messages.value.concat(added);
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
    if (this.phase.value === 'loading') this.armQuietTimer();
    try {
      await stream.run((event) => this.add(event.data, this.phase.value === 'ready'));
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
    clearTimeout(this.flushTimer);
    clearTimeout(this.quietTimer);
    clearTimeout(this.progressTimer);
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
