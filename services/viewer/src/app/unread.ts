import { signal } from '@preact/signals';
import type { ChatClient, RoomRef } from '@chat/client';
import { roomHash } from './route.ts';

/** Counts stop here ("50+"): one page read per room, whatever was written since. */
export const UNREAD_CAP = 50;
/** How often the list's counts are read again while the page is open. */
const REFRESH_MS = 10_000;
/** A room seen while it held no message: everything in it is unread. */
const SEEN_EMPTY = '';

/**
 * Where the person last was in each room: the cursor of the newest message they had on screen, kept in
 * this browser's localStorage per signed-in principal, so it outlives the tab and is not another
 * person's on a shared browser.
 */
export class SeenPositions {
  private readonly key: string;

  constructor(userId: string) {
    this.key = `chat-viewer.seen.${userId}`;
  }

  private all(): Record<string, string> {
    try {
      const value: unknown = JSON.parse(localStorage.getItem(this.key) ?? '{}');
      return value && typeof value === 'object' ? (value as Record<string, string>) : {};
    } catch {
      return {};
    }
  }

  /** The cursor last seen in `room`; `''` when it was seen empty; undefined when never opened here. */
  get(room: RoomRef): string | undefined {
    const cursor = this.all()[roomHash(room)];
    return typeof cursor === 'string' ? cursor : undefined;
  }

  set(room: RoomRef, cursor: string | undefined): void {
    const all = this.all();
    all[roomHash(room)] = cursor ?? SEEN_EMPTY;
    try {
      localStorage.setItem(this.key, JSON.stringify(all));
    } catch {
      // Storage full or refused: counts then start from the next visit, nothing else depends on it.
    }
  }
}

/**
 * Unread counts of the room list: for each room opened before in this browser, the messages after the
 * last one seen, read with the history extension's page after that cursor (limit {@link UNREAD_CAP} + 1,
 * so a count costs one page). Rooms never opened here have no count, and neither has the open room.
 */
export class UnreadCounts {
  readonly counts = signal<ReadonlyMap<string, number>>(new Map());
  private timer: ReturnType<typeof setInterval> | undefined;
  private rooms: RoomRef[] = [];
  private open: RoomRef | undefined;

  constructor(
    private readonly client: ChatClient,
    readonly seen: SeenPositions,
  ) {}

  /** Follows `rooms`, with `open` the room on screen; reads the counts now and every few seconds. */
  watch(rooms: RoomRef[], open: RoomRef | undefined): void {
    this.rooms = rooms;
    this.open = open;
    if (open) this.clear(open);
    void this.refresh();
    this.timer ??= setInterval(() => void this.refresh(), REFRESH_MS);
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private clear(room: RoomRef): void {
    const key = roomHash(room);
    if (!this.counts.value.has(key)) return;
    const next = new Map(this.counts.value);
    next.delete(key);
    this.counts.value = next;
  }

  async refresh(): Promise<void> {
    const open = this.open ? roomHash(this.open) : undefined;
    const results = await Promise.all(
      this.rooms.map(async (room): Promise<[string, number] | undefined> => {
        const key = roomHash(room);
        const cursor = this.seen.get(room);
        if (cursor === undefined || key === open) return undefined;
        try {
          const page = await this.client.listMessageHistory(room, cursor === SEEN_EMPTY ? { limit: UNREAD_CAP + 1 } : { after: cursor, limit: UNREAD_CAP + 1 });
          return [key, page.items.length];
        } catch {
          // A room the person can no longer read, or a cursor the service no longer takes: no count.
          return undefined;
        }
      }),
    );
    // The open room may have changed while the pages were read; it never shows a count.
    const current = this.open ? roomHash(this.open) : undefined;
    this.counts.value = new Map(results.filter((r): r is [string, number] => r !== undefined && r[1] > 0 && r[0] !== current));
  }
}

/** A count as the list shows it: exact up to the cap, then "50+". */
export function unreadText(count: number): string {
  return count > UNREAD_CAP ? `${UNREAD_CAP}+` : String(count);
}
