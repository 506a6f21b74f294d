import type { CursorCodec } from '@chat/contracts';
import { inboxKey, type InboxOwner, type Store } from '@chat/store';
import { inboxCursorBinding, parseStoredNotification, toNotificationResponse, withInboxPosition } from '@chat/wire-format';
import type { StreamSource } from './stream-source.ts';

/** The cursor scope of an inbox: the same binding the API's list and acknowledge use. */
export { inboxCursorBinding };

/**
 * One principal's inbox in one repository as a stream source: the notifications of inbox key
 * `inboxKey(owner)`, announced on the `notifications` channel under that key.
 *
 * An inbox that does not exist yet (never notified) has a high-water mark of 0: the stream replays
 * nothing and goes live; the notifier creates the inbox with its first notification, whose event the
 * hub delivers under the same key.
 *
 * `acknowledged` is evaluated against the checkpoint read with the data: a replay page is read with
 * the checkpoint, and so is a gap-fill page (read once for every stream of the inbox, by its
 * orderer); a live event is evaluated when it is sent, against the checkpoint this stream last read
 * (at opening and with every replay page). A live notification is a new one, and the checkpoint can
 * never pass a notification before it commits, so a live event reads `false` unless the client
 * acknowledged it in the few milliseconds between its commit and its delivery. An event, once sent,
 * is never updated: the acknowledgement endpoint's checkpoint is what counts.
 */
export function createInboxSource(deps: { store: Store; cursors: CursorCodec }, owner: InboxOwner): StreamSource {
  const key = inboxKey(owner);
  const scope = inboxCursorBinding(owner);
  const cursorFor = (seq: number) => deps.cursors.encode(scope, seq);
  // The checkpoint only moves forward, so the highest value seen is the freshest.
  let ackSeq = 0;
  const readCheckpoint = async () => {
    const inbox = await deps.store.inboxes.findByKey(key);
    if (inbox && inbox.ackSeq > ackSeq) ackSeq = inbox.ackSeq;
    return inbox;
  };
  return {
    channel: 'notifications',
    scopeKey: key,
    eventName: 'notification',
    async highWater() {
      const inbox = await readCheckpoint();
      return inbox?.lastSeq ?? 0;
    },
    async readAfter(afterSeq, limit) {
      const [rows] = await Promise.all([deps.store.notifications.listAfter(key, afterSeq, limit), readCheckpoint()]);
      return rows.map((row) => ({ seq: row.seq, data: JSON.stringify(toNotificationResponse(row, ackSeq, cursorFor(row.seq))) }));
    },
    cursorFor,
    fromLive(seq, payload) {
      const stored = parseStoredNotification(payload, `notifications event ${seq} of ${key}`);
      return JSON.stringify(withInboxPosition(stored, cursorFor(seq), seq <= ackSeq));
    },
  };
}
