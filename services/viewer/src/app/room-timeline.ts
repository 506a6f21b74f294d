import { batch, signal } from '@preact/signals';
import {
  ChatApiError,
  ChatStreamError,
  type ChatClient,
  type ChatEventStream,
  type MessageHistoryPageResponse,
  type MessageResponse,
  type RoomMessageEvent,
  type RoomRef,
  type RoomResponse,
  type StreamStatus,
} from '@chat/client';

/** Messages read at opening and by each step of scrolling (a screen holds about 15). */
export const PAGE_SIZE = 100;
/** Pages read back, at most, when a message is looked for by its ID alone (an inbox jump). */
const SEARCH_PAGES = 20;

export type TimelinePhase = 'loading' | 'ready' | 'failed';

/** Where a room opens: its newest message, or a message a permalink names by ID and cursor. */
export interface TimelineTarget {
  messageId?: string | undefined;
  cursor?: string | undefined;
}

/**
 * One room on screen: its metadata, a run of consecutive messages oldest first, and the live stream.
 * The room opens at its newest page (or, for a permalink, at the page around the message's cursor)
 * through the service's history read, whose cost is one page whatever the room's size; older pages
 * are read as the person scrolls up, newer ones as they scroll down from a permalink. Once the run
 * reaches the newest message, the stream is resumed from the newest message's cursor (a message's
 * cursor is its event ID), so nothing between the read and the stream is lost or doubled. A
 * reconnect may replay its last event (spec 6 rule 7): messages are kept once by ID.
 */
export class RoomTimeline {
  readonly room = signal<RoomResponse | undefined>(undefined);
  readonly messages = signal<readonly MessageResponse[]>([]);
  /** Each message's cursor, for its permalink; a message this tab sent has one once the stream brings it. */
  readonly cursors = signal<ReadonlyMap<string, string>>(new Map());
  readonly phase = signal<TimelinePhase>('loading');
  /** Older messages exist that are not read yet. */
  readonly hasOlder = signal(false);
  /** The run ends before the newest message (a permalink's page): newer ones are read by scrolling down. */
  readonly hasNewer = signal(false);
  readonly loadingOlder = signal(false);
  readonly connection = signal<StreamStatus | undefined>(undefined);
  readonly failure = signal<Error | undefined>(undefined);
  private readonly ids = new Set<string>();
  /** Live messages not yet rendered: rendering happens once per batch, not per event. */
  private pending: MessageResponse[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private olderCursor: string | undefined;
  private newerCursor: string | undefined;
  private loadingNewer = false;
  private stream: ChatEventStream<RoomMessageEvent> | undefined;
  private resumeCursor: string | undefined;
  /** Bumped by each (re)opening, so the answers of an abandoned one are dropped. */
  private generation = 0;
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

  /** Opens the room at `target`'s cursor when it has one the service takes, else at the newest message. */
  async open(target: TimelineTarget = {}): Promise<void> {
    const generation = ++this.generation;
    try {
      const room = this.client.getRoom(this.ref);
      const page = (target.cursor ? await this.pageAround(target.cursor) : undefined) ?? (await this.read({ limit: PAGE_SIZE }));
      this.room.value = await room;
      if (this.closed || generation !== this.generation) return;
      batch(() => {
        this.ids.clear();
        this.messages.value = [];
        this.cursors.value = new Map();
        this.place(page, 'replace');
        this.olderCursor = page.olderCursor ?? undefined;
        this.hasOlder.value = !!page.olderCursor;
        this.setNewer(page);
        this.phase.value = 'ready';
      });
      // A sealed room that was never written to cannot be materialized, so it has no stream (spec 3).
      if (this.room.value.state === 'sealed' && !this.room.value.persisted) return;
      if (!this.hasNewer.value) void this.follow();
    } catch (error) {
      if (this.closed || generation !== this.generation) return;
      this.failure.value = error as Error;
      this.phase.value = 'failed';
      if (isAccessError(error)) this.hooks.onAccessLost(error as Error);
    }
  }

  /** Leaves a permalink's page for the newest messages, followed live. */
  async jumpToLatest(): Promise<void> {
    this.stream?.close();
    this.stream = undefined;
    this.resumeCursor = undefined;
    await this.open();
  }

  /**
   * The page around a permalink's message: it and the messages after it, and those before it, read
   * at once. Undefined when the service refuses the cursor (a secret rotated out since the link was
   * made, say): the caller then opens at the newest message and looks for the ID.
   */
  private async pageAround(cursor: string): Promise<MessageHistoryPageResponse | undefined> {
    try {
      const half = PAGE_SIZE / 2;
      const [before, at] = await Promise.all([this.read({ before: cursor, limit: half }), this.read({ at: cursor, limit: half })]);
      return {
        items: [...before.items, ...at.items],
        cursors: [...before.cursors, ...at.cursors],
        olderCursor: before.items.length > 0 ? before.olderCursor : null,
        newerCursor: at.newerCursor,
      };
    } catch (error) {
      if (error instanceof ChatApiError && error.code === 'CURSOR_INVALID') return undefined;
      throw error;
    }
  }

  private read(options: { before?: string; after?: string; at?: string; limit: number }): Promise<MessageHistoryPageResponse> {
    return this.client.listMessageHistory(this.ref, options);
  }

  /** Reads the page before the first message shown; resolves when it is rendered (or there is none). */
  async loadOlder(): Promise<void> {
    const cursor = this.olderCursor;
    if (!cursor || this.loadingOlder.value || this.phase.value !== 'ready') return;
    const generation = this.generation;
    this.loadingOlder.value = true;
    try {
      const page = await this.read({ before: cursor, limit: PAGE_SIZE });
      if (this.closed || generation !== this.generation) return;
      batch(() => {
        this.place(page, 'prepend');
        this.olderCursor = page.olderCursor ?? undefined;
        this.hasOlder.value = !!page.olderCursor;
      });
    } catch (error) {
      this.failed(error);
    } finally {
      this.loadingOlder.value = false;
    }
  }

  /** Reads the page after the last message shown, on a permalink's page; at the newest, follows live. */
  async loadNewer(): Promise<void> {
    const cursor = this.newerCursor;
    if (!cursor || this.loadingNewer || this.phase.value !== 'ready') return;
    const generation = this.generation;
    this.loadingNewer = true;
    try {
      const page = await this.read({ after: cursor, limit: PAGE_SIZE });
      if (this.closed || generation !== this.generation) return;
      batch(() => {
        this.place(page, 'append');
        this.setNewer(page, cursor);
      });
      if (!this.hasNewer.value) void this.follow();
    } catch (error) {
      this.failed(error);
    } finally {
      this.loadingNewer = false;
    }
  }

  private setNewer(page: MessageHistoryPageResponse, previous?: string): void {
    this.newerCursor = page.newerCursor ?? undefined;
    this.hasNewer.value = !!page.newerCursor;
    // The stream takes over after the last message read: its cursor is that message's event ID.
    this.resumeCursor = page.cursors[page.cursors.length - 1] ?? previous ?? this.resumeCursor;
  }

  private place(page: MessageHistoryPageResponse, where: 'replace' | 'prepend' | 'append'): void {
    const fresh: MessageResponse[] = [];
    const cursors = new Map(this.cursors.value);
    page.items.forEach((message, i) => {
      const cursor = page.cursors[i];
      if (cursor) cursors.set(message.messageId, cursor);
      if (this.ids.has(message.messageId)) return;
      this.ids.add(message.messageId);
      fresh.push(message);
    });
    this.cursors.value = cursors;
    this.messages.value = where === 'prepend' ? [...fresh, ...this.messages.value] : [...this.messages.value, ...fresh];
  }

  /**
   * Makes sure `messageId` is read: pages are read back from the oldest one shown until it appears,
   * for at most {@link SEARCH_PAGES} pages. False when it is not found.
   */
  async reveal(messageId: string): Promise<boolean> {
    for (let pages = 0; !this.ids.has(messageId); pages++) {
      if (!this.hasOlder.value || pages >= SEARCH_PAGES || this.closed) return false;
      await this.loadOlder();
    }
    return true;
  }

  /** Adds a message (from the stream, with its cursor, or from this tab's own append) unless it is here. */
  add(message: MessageResponse, live: boolean, cursor?: string): void {
    if (cursor && !this.cursors.value.has(message.messageId)) this.cursors.value = new Map(this.cursors.value).set(message.messageId, cursor);
    // On a permalink's page, newer messages come in order by scrolling down, never past a gap.
    if (this.ids.has(message.messageId) || this.hasNewer.value) return;
    this.ids.add(message.messageId);
    this.pending.push(message);
    this.flushTimer ??= setTimeout(() => this.flush(), 0);
    if (live) this.hooks.onLive(message);
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
    try {
      await stream.run((event) => this.add(event.data, true, event.id));
    } catch (error) {
      if (this.closed || this.stream !== stream) return;
      this.failed(error);
    } finally {
      if (this.stream === stream) this.resumeCursor = stream.cursor ?? this.resumeCursor;
    }
  }

  private failed(error: unknown): void {
    if (this.closed) return;
    this.failure.value = error as Error;
    if (isAccessError(error)) this.hooks.onAccessLost(error as Error);
  }

  markSealed(): void {
    const room = this.room.value;
    if (room) this.room.value = { ...room, state: 'sealed' };
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.flushTimer);
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
