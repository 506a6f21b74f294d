import type { ChatClient, MessageResponse, NotificationResponse, RoomRef } from '@chat/client';

/** The API's largest page. */
const PAGE = 200;
/** Rooms whose scan position is kept; the least recently used one is dropped beyond. @defaultValue 1000 */
const MAX_ROOMS = 1000;
/** Mention messages kept per room, found but not yet asked for. @defaultValue 5000 */
const MAX_FOUND = 5000;

/** The message a notification points to is not in its room (yet): the handler is retried later. */
export class MessageNotFoundError extends Error {
  override readonly name = 'MessageNotFoundError';
}

/** How far one room has been read, and the mentions of the bot found there and not yet asked for. */
interface RoomScan {
  room: RoomRef;
  /** Everything up to this cursor has been read (null: from the room's start). */
  cursor: string | null;
  /** Mentions of the bot read after `cursor`'s position or before it and not yet asked for, by message ID. */
  found: Map<string, MessageResponse>;
  /** Messages already handed out that lie after `cursor` (re-read by the next scan, not to be kept again). */
  consumed: Set<string>;
}

const roomKey = (n: NotificationResponse) => `${n.repositoryId}/${n.branchId ?? ''}`;

function mentionsTarget(message: MessageResponse, n: NotificationResponse): boolean {
  return (message.mentions ?? []).some((m) => m.principalKind === n.targetKind && m.principalId === n.targetId);
}

/**
 * Finds the message a notification points to. The API has no "get one message" operation and a
 * notification carries no room cursor, so the room is listed forward from where the last lookup in it
 * stopped; the mentions of the bot met on the way are kept for the notifications that follow (they
 * arrive in about the room's order), which makes a backlog cost one list request per 200 messages.
 *
 * A list page names a cursor only when more follow, so the last, partial page of a room gives none.
 * To not read the same tail again and again, the scan asks for that tail less its last message once
 * more, which names the cursor of the one before last. A miss after reading to the end starts the
 * room again from its start once (the message may be older than the scan position, e.g. evicted).
 */
export class MessageLocator {
  private readonly scans = new Map<string, RoomScan>();

  constructor(private readonly client: ChatClient) {}

  async find(notification: NotificationResponse, signal?: AbortSignal): Promise<MessageResponse> {
    const scan = this.scanOf(notification);
    const hit = this.take(scan, notification.messageId);
    if (hit) return hit;
    const fromStart = scan.cursor === null;
    await this.readToEnd(scan, notification, signal);
    const found = this.take(scan, notification.messageId);
    if (found) return found;
    if (!fromStart) {
      scan.cursor = null;
      scan.found.clear();
      scan.consumed.clear();
      await this.readToEnd(scan, notification, signal);
      const again = this.take(scan, notification.messageId);
      if (again) return again;
    }
    throw new MessageNotFoundError(`message ${notification.messageId} of notification ${notification.notificationId} is not in its room`);
  }

  private scanOf(notification: NotificationResponse): RoomScan {
    const key = roomKey(notification);
    let scan = this.scans.get(key);
    if (scan) {
      // Most recently used last, so the first entry is the one to drop.
      this.scans.delete(key);
    } else {
      const room: RoomRef = notification.branchId ? { repositoryId: notification.repositoryId, branchId: notification.branchId } : { repositoryId: notification.repositoryId };
      scan = { room, cursor: null, found: new Map(), consumed: new Set() };
      if (this.scans.size >= MAX_ROOMS) this.scans.delete(this.scans.keys().next().value!);
    }
    this.scans.set(key, scan);
    return scan;
  }

  private take(scan: RoomScan, messageId: string): MessageResponse | undefined {
    const message = scan.found.get(messageId);
    if (!message) return undefined;
    scan.found.delete(messageId);
    scan.consumed.add(messageId);
    return message;
  }

  private keep(scan: RoomScan, message: MessageResponse, notification: NotificationResponse): void {
    if (scan.consumed.has(message.messageId) || !mentionsTarget(message, notification)) return;
    scan.found.set(message.messageId, message);
    if (scan.found.size > MAX_FOUND) scan.found.delete(scan.found.keys().next().value!);
  }

  /** Lists the room from the scan's cursor to its end, keeping the bot's mentions and moving the cursor. */
  private async readToEnd(scan: RoomScan, notification: NotificationResponse, signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      const page = await this.client.listMessages(scan.room, { cursor: scan.cursor, limit: PAGE, ...(signal ? { signal } : {}) });
      for (const message of page.items) this.keep(scan, message, notification);
      if (page.nextCursor) {
        // Everything handed out so far lies at or before the new cursor.
        scan.cursor = page.nextCursor;
        scan.consumed.clear();
        continue;
      }
      const tail = page.items;
      if (tail.length >= 2) {
        const shorter = await this.client.listMessages(scan.room, { cursor: scan.cursor, limit: tail.length - 1, ...(signal ? { signal } : {}) });
        if (shorter.nextCursor) {
          scan.cursor = shorter.nextCursor;
          const last = tail[tail.length - 1]!.messageId;
          const lastConsumed = scan.consumed.has(last);
          scan.consumed.clear();
          if (lastConsumed) scan.consumed.add(last);
        }
      }
      return;
    }
  }
}
