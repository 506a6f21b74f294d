import type { CursorCodec } from '@chat/contracts';
import { feedKey, type FeedPrincipal, type Store } from '@chat/store';
import { feedCursorBinding, inboxCursorBinding, parseFeedEntry, toMessageResponse, toNotificationResponse, withInboxPosition, type FeedEntry } from '@chat/wire-format';
import type { StreamSource } from './stream-source.ts';

/** The cursor scope of a principal's feed: the same binding the API's feed list and acknowledgement use. */
export { feedCursorBinding };

/**
 * One principal's feed as a stream source: its notifications across every repository, in feed
 * order (`feed_seq`), announced on the `notifications` channel under the feed key. A partitioned
 * scope: each item's partition is its repository, and each stream sends only the items of the
 * repositories its principal may read now (the stream's filter), passing over the rest.
 *
 * An item's SSE id is its feed cursor; its data is the NotificationResponse a repository inbox would
 * send, with that inbox's own cursor, so a client can still acknowledge per repository.
 *
 * `acknowledged`: an item read from the store (replay, gap fill) is evaluated against its inbox's
 * checkpoint, read with it; a live event against the feed checkpoint this stream last read (at
 * opening): acknowledging the feed through a position moves every inbox's checkpoint through its
 * notifications at or below it. As for a repository inbox, a live notification is a new one, and reads
 * `false` unless the client acknowledged it between its commit and its delivery.
 *
 * With `includeMessage`, each item's data carries the notified message too (`message`, a
 * MessageResponse): a replayed item's is read with it in the same statement, a live event's is in
 * the feed entry (the notifier writes it there), so a bot needs no request to read what it was
 * mentioned in. An entry written without the message is sent without it.
 */
export function createPrincipalFeedSource(deps: { store: Store; cursors: CursorCodec }, owner: FeedPrincipal, options: { includeMessage: boolean } = { includeMessage: false }): StreamSource {
  const key = feedKey(owner);
  const scope = feedCursorBinding(owner);
  const cursorFor = (seq: number) => deps.cursors.encode(scope, seq);
  const inboxCursorFor = (repositoryId: string, inboxSeq: number) =>
    deps.cursors.encode(inboxCursorBinding({ repositoryId, principalKind: owner.principalKind, principalId: owner.principalId }), inboxSeq);
  // The checkpoint only moves forward, so the highest value seen is the freshest.
  let ackSeq = 0;
  // A stream asks a live event's partition and then its data: the payload is parsed once for both.
  let last: { payload: string; entry: FeedEntry } | undefined;
  const entryOf = (payload: string): FeedEntry => {
    if (last?.payload !== payload) last = { payload, entry: parseFeedEntry(payload, `a notifications event of ${key}`) };
    return last.entry;
  };
  return {
    channel: 'notifications',
    scopeKey: key,
    eventName: 'notification',
    async highWater() {
      const feed = await deps.store.principalFeeds.find(owner);
      if (feed && feed.ackSeq > ackSeq) ackSeq = feed.ackSeq;
      return feed?.lastSeq ?? 0;
    },
    async readAfter(afterSeq, limit) {
      if (options.includeMessage) {
        const rows = await deps.store.principalFeeds.listAfterWithMessages(owner, afterSeq, limit);
        return rows.map((row) => ({
          seq: row.feedSeq,
          data: JSON.stringify({
            ...toNotificationResponse(row, row.inboxAckSeq, inboxCursorFor(row.repositoryId, row.seq)),
            ...(row.message ? { message: toMessageResponse(row.message) } : {}),
          }),
          partition: row.repositoryId,
        }));
      }
      const rows = await deps.store.principalFeeds.listAfter(owner, afterSeq, limit);
      return rows.map((row) => ({
        seq: row.feedSeq,
        data: JSON.stringify(toNotificationResponse(row, row.inboxAckSeq, inboxCursorFor(row.repositoryId, row.seq))),
        partition: row.repositoryId,
      }));
    },
    cursorFor,
    fromLive(seq, payload) {
      const { inboxSeq, notification, message } = entryOf(payload);
      // The data is the event's last use here: an idle stream keeps no payload.
      last = undefined;
      const item = withInboxPosition(notification, inboxCursorFor(notification.repositoryId, inboxSeq), seq <= ackSeq);
      return JSON.stringify(options.includeMessage && message ? { ...item, message } : item);
    },
    partitionOf(payload) {
      return entryOf(payload).notification.repositoryId;
    },
  };
}
