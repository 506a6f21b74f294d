import type { ChatClient, NotificationResponse, RoomRef } from '@chat/client';

/**
 * Messages read per room at most while looking up texts. The API lists a room only forward from
 * its start (there is no "get one message"), so this bounds what one listing costs: 10,000
 * messages are 50 requests.
 */
export const MAX_MESSAGES_READ_PER_ROOM = 10_000;

/** Characters of a first line shown; a longer one is cut with an ellipsis. */
const MAX_LINE = 120;

/** The first non-empty line of a body, cut to {@link MAX_LINE} characters. */
export function firstLine(bodyMarkdown: string): string {
  const line = bodyMarkdown.split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
  const characters = [...line];
  return characters.length > MAX_LINE ? `${characters.slice(0, MAX_LINE - 1).join('')}…` : line;
}

/**
 * The first line of the message of each notification, by message ID, read from the notifications'
 * rooms. A message beyond the first {@link MAX_MESSAGES_READ_PER_ROOM} of its room is left out.
 */
export async function messageFirstLines(client: ChatClient, notifications: NotificationResponse[]): Promise<Map<string, string>> {
  const rooms = new Map<string, { room: RoomRef; wanted: Set<string> }>();
  for (const n of notifications) {
    const key = `${n.repositoryId}/${n.branchId ?? ''}`;
    const entry = rooms.get(key) ?? { room: { repositoryId: n.repositoryId, branchId: n.branchId ?? null }, wanted: new Set<string>() };
    entry.wanted.add(n.messageId);
    rooms.set(key, entry);
  }
  const lines = new Map<string, string>();
  for (const { room, wanted } of rooms.values()) {
    let read = 0;
    for await (const message of client.roomMessages({ ...room, pageSize: 200 })) {
      if (wanted.delete(message.messageId)) lines.set(message.messageId, firstLine(message.bodyMarkdown));
      read += 1;
      if (wanted.size === 0 || read >= MAX_MESSAGES_READ_PER_ROOM) break;
    }
  }
  return lines;
}
