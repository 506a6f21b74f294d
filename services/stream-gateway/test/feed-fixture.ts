import type { FeedPrincipal, InboxOwner, MessageRow, NotificationRow } from '@chat/store';
import { feedCursorBinding } from '@chat/wire-format';
import type { GatewayHarness } from './gateway-harness.ts';
import { appendNotification, expectedNotification, publishNotification } from './inbox-fixture.ts';

/** The caller's inbox across repositories. */
export const PRINCIPAL_INBOX_PATH = '/v1/inbox/events';

/** One notification at its place in its principal's feed. */
export interface FedNotification {
  owner: InboxOwner;
  row: NotificationRow;
  feedKey: string;
  feedSeq: number;
  /** The feed entry's backbone data, as the notifier publishes it. */
  payload: string;
}

/**
 * Writes one notification the way the notifier does (its inbox and feed entries in one transaction),
 * then publishes both entries on `notifications`, the inbox's and the feed's, unless told not to.
 */
export async function notifyFeed(h: GatewayHarness, owner: InboxOwner, options: { publish?: boolean; message?: MessageRow } = {}): Promise<FedNotification> {
  const outcome = await appendNotification(h, owner, options.message ? { message: options.message } : {});
  const fed = { owner, row: outcome.notification, feedKey: outcome.feed.feedKey, feedSeq: outcome.feed.feedSeq, payload: outcome.feed.payload };
  if (options.publish !== false) {
    await publishNotification(h, fed.row);
    await publishFeedEntry(h, fed);
  }
  return fed;
}

/** Publishes a committed notification's feed entry the way the notifier does after commit. */
export async function publishFeedEntry(h: GatewayHarness, fed: FedNotification): Promise<void> {
  await h.backbone.publish([{ channel: 'notifications', scopeKey: fed.feedKey, seq: fed.feedSeq, data: fed.payload }]);
}

export function feedCursorOf(h: GatewayHarness, principal: FeedPrincipal, seq: number): string {
  return h.gateway.deps.cursors.encode(feedCursorBinding(principal), seq);
}

/** What a `notification` event of the feed must carry for `fed`: its inbox's own cursor, acknowledged against that inbox's checkpoint. */
export function expectedFeedNotification(h: GatewayHarness, fed: FedNotification, inboxAckSeq: number) {
  return expectedNotification(h, fed.owner, fed.row, inboxAckSeq);
}
