/** The key of the commit time in every durable event's JSON (MessageResponse, Notification). */
const CREATED_AT = '"createdAt":"';
/** `Date.prototype.toISOString`'s length: `YYYY-MM-DDTHH:mm:ss.sssZ`. */
const ISO_LENGTH = 24;

/**
 * The commit time, in epoch milliseconds, of a durable event's JSON data: its first `createdAt` (a
 * MessageResponse's; a stored Notification's; a feed entry's, whose notification comes first), or
 * undefined when it has none. A key search and one date parse (~0.2 µs) instead of parsing the
 * payload, which may be a message of 64 KiB. Text inside a JSON string cannot match the key: its
 * quotes are escaped there.
 */
export function commitTimeOf(payload: string): number | undefined {
  const at = payload.indexOf(CREATED_AT);
  if (at < 0) return undefined;
  const start = at + CREATED_AT.length;
  const ms = Date.parse(payload.slice(start, start + ISO_LENGTH));
  return Number.isNaN(ms) ? undefined : ms;
}
