import { inboxKey, type InboxOwner, type MessageRow, type NotificationRow } from '@chat/store';
import { messageJson, storedNotificationJson, toNotificationResponse } from '@chat/wire-format';
import { ulid } from 'ulid';
import { inboxCursorBinding } from '../src/domain/inbox-source.ts';
import type { GatewayHarness } from './gateway-harness.ts';

/** The inbox path of a repository. */
export function inboxEventsPath(repositoryId: string): string {
  return `/v1/repositories/${repositoryId}/inbox/events`;
}

export const human = (repositoryId: string, principalId = 'u_alice'): InboxOwner => ({ repositoryId, principalKind: 'human', principalId });
export const bot = (repositoryId: string, principalId = 'b_ci'): InboxOwner => ({ repositoryId, principalKind: 'bot', principalId });

/**
 * Writes one notification the way the notifier does (inbox, counters, notification and outbox entry
 * in one transaction), then publishes its stored form on `notifications` unless told not to.
 */
export async function notify(h: GatewayHarness, owner: InboxOwner, options: { publish?: boolean; branchId?: string } = {}): Promise<NotificationRow> {
  const outcome = await appendNotification(h, owner, options);
  if (options.publish !== false) await publishNotification(h, outcome.notification);
  return outcome.notification;
}

/** Writes one notification the way the notifier does, and publishes nothing. */
export async function appendNotification(h: GatewayHarness, owner: InboxOwner, options: { branchId?: string; message?: MessageRow } = {}) {
  const { message } = options;
  const outcome = await h.gateway.deps.store.notifications.append(
    owner,
    {
      messageId: message?.messageId ?? ulid(),
      roomId: message?.roomId ?? ulid(),
      branchId: message?.branchId ?? options.branchId ?? null,
      senderKind: 'user',
      senderId: 'u_bob',
      spans: [
        { startByte: 0, endByte: 6 },
        { startByte: 10, endByte: 16 },
      ],
    },
    // With the message, as the notifier writes it: carried in the feed entry.
    { now: new Date(), outboxPayload: storedNotificationJson, ...(message ? { feedMessage: messageJson(message) } : {}) },
  );
  if (outcome.kind !== 'created') throw new Error(`notification append was ${outcome.kind}`);
  return outcome;
}

/** Publishes a committed notification the way the notifier does after commit. */
export async function publishNotification(h: GatewayHarness, row: NotificationRow): Promise<void> {
  await h.backbone.publish([{ channel: 'notifications', scopeKey: row.inboxKey, seq: row.seq, data: storedNotificationJson(row) }]);
}

export function inboxCursorOf(h: GatewayHarness, owner: InboxOwner, seq: number): string {
  return h.gateway.deps.cursors.encode(inboxCursorBinding(owner), seq);
}

/** What a `notification` event must carry for `row`, against checkpoint `ackSeq`. */
export function expectedNotification(h: GatewayHarness, owner: InboxOwner, row: NotificationRow, ackSeq: number) {
  return toNotificationResponse(row, ackSeq, inboxCursorOf(h, owner, row.seq));
}

/** Moves the owner's checkpoint from `fromSeq` to `toSeq`, as the acknowledgement endpoint does. */
export async function acknowledge(h: GatewayHarness, owner: InboxOwner, fromSeq: number, toSeq: number): Promise<void> {
  if (!(await h.gateway.deps.store.inboxes.advanceAck(inboxKey(owner), fromSeq, toSeq))) throw new Error('checkpoint did not move');
}
