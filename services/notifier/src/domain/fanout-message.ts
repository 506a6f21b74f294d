import type { CoreClient, MentionTarget as CoreTarget } from '@chat/authz-client';
import type { Backbone, BackboneEvent } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { FeedPlacement, MentionFanoutRow, MessageRow, NotificationRow, Store } from '@chat/store';
import { startPublishSpan } from '@chat/tracing';
import { messageJson, storedNotificationJson } from '@chat/wire-format';
import { groupMentionTargets, type MentionTarget } from './mention-targets.ts';
import { PoisonFanoutError } from './poison-fanout-error.ts';

export interface FanoutDeps {
  store: Store;
  core: CoreClient;
  backbone: Backbone;
  logger: Logger;
  clock: () => Date;
}

export interface FanoutResult {
  /** Notifications written by this run (a redelivered message writes none). */
  created: number;
  /** Targets core says may not read the message's scope: they get nothing. */
  denied: number;
  /** The message itself, for latency measurement. */
  message: MessageRow;
}

/** Targets per core call (core's limit for mention resolution). */
const CORE_TARGETS_PER_CALL = 100;

/** What a fanout writes: the message, its targets, and those core says may read its scope. */
export interface PreparedFanout {
  message: MessageRow;
  targets: MentionTarget[];
  allowed: MentionTarget[];
}

/**
 * Turns one message's mentions into notifications: one per target that may read the message's scope
 * now (asked live of core), carrying all of that target's spans. Idempotent: running it again for the
 * same message writes nothing new, so crashes, redeliveries and several workers are harmless.
 * Writes only while `row` is pending (not completed or dead-lettered by another worker).
 * @throws AppError AUTHORIZATION_UNAVAILABLE / STORE_UNAVAILABLE when a dependency is down (retry later);
 * PoisonFanoutError when the row can never succeed; FanoutSettledError when another worker settled it.
 */
export async function fanoutMessage(deps: FanoutDeps, row: MentionFanoutRow): Promise<FanoutResult> {
  return writeFanout(deps, await prepareFanout(deps, row));
}

/**
 * The part of a fanout that writes nothing: reads the message and asks core which targets may read
 * it. A worker runs it for the next rows of a room while the room's current row is written.
 */
export async function prepareFanout(deps: Pick<FanoutDeps, 'store' | 'core'>, row: MentionFanoutRow): Promise<PreparedFanout> {
  const [message] = await deps.store.messages.listAfter(row.roomId, row.seq - 1, 1);
  if (!message || message.messageId !== row.messageId) {
    throw new PoisonFanoutError(`message ${row.messageId} is not at seq ${row.seq} of room ${row.roomId}`);
  }
  const targets = groupMentionTargets(message.mentions ?? []);
  return { message, targets, allowed: await targetsThatMayRead(deps.core, message, targets) };
}

/** Writes a prepared fanout's notifications (only while its row is pending) and publishes them. */
export async function writeFanout(deps: FanoutDeps, prepared: PreparedFanout): Promise<FanoutResult> {
  const { message, targets, allowed } = prepared;
  const feedMessage = allowed.length > 0 ? messageJson(message) : undefined;
  // allSettled, not all: nothing of this run may still be writing once it has returned or thrown.
  const settled = await Promise.allSettled(
    allowed.map((target) =>
      deps.store.notifications.append(
        { repositoryId: message.repositoryId, principalKind: target.kind, principalId: target.id },
        {
          messageId: message.messageId,
          roomId: message.roomId,
          branchId: message.branchId,
          senderKind: message.senderKind,
          senderId: message.senderId,
          spans: target.spans,
        },
        // Only while the row is pending: a run whose lease lapsed cannot write after the room moved on.
        { now: deps.clock(), outboxPayload: storedNotificationJson, whileFanoutPending: true, ...(feedMessage === undefined ? {} : { feedMessage }) },
      ),
    ),
  );
  const failure = settled.find((s) => s.status === 'rejected');
  if (failure) throw failure.reason;
  const outcomes = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const committed = outcomes.flatMap((o) => (o.kind === 'created' ? [o] : []));
  if (committed.length > 0) await publishAfterCommit(deps, committed);
  const created = committed.length;
  return { created, denied: targets.length - allowed.length, message };
}

async function targetsThatMayRead(core: CoreClient, message: MessageRow, targets: MentionTarget[]): Promise<MentionTarget[]> {
  const valid = new Set<string>();
  for (let i = 0; i < targets.length; i += CORE_TARGETS_PER_CALL) {
    const chunk: CoreTarget[] = targets.slice(i, i + CORE_TARGETS_PER_CALL).map((t) => ({ kind: t.kind, id: t.id }));
    // No resource token: this is core's own answer to "may this principal read the scope", asked by
    // chat as a service (docs/core-contract.md, mention resolution at fanout).
    const resolution = await core.resolveMentions({
      repositoryId: message.repositoryId,
      ...(message.branchId === null ? {} : { branchId: message.branchId }),
      targets: chunk,
    });
    for (const t of resolution.targets) if (t.valid) valid.add(`${t.kind}:${t.id}`);
  }
  return targets.filter((t) => valid.has(`${t.kind}:${t.id}`));
}

/**
 * Sends committed notifications to the backbone at once for low latency, each to its inbox and to its
 * principal's feed, then clears their outbox entries. A failure only delays them: the outbox relay
 * publishes whatever is left.
 */
async function publishAfterCommit(
  deps: FanoutDeps,
  committed: Array<{ notification: NotificationRow; outboxId: number; feed: FeedPlacement }>,
): Promise<void> {
  // A traced fanout's publish (tracing on) is a span of the append's trace; the inbox streams' deliveries follow its traceparent.
  const publish = startPublishSpan('notifications');
  const events: BackboneEvent[] = committed.flatMap(({ notification, feed }) => [
    { channel: 'notifications' as const, scopeKey: notification.inboxKey, seq: notification.seq, data: storedNotificationJson(notification) },
    { channel: 'notifications' as const, scopeKey: feed.feedKey, seq: feed.feedSeq, data: feed.payload },
  ]);
  if (publish) for (const event of events) event.traceparent = publish.traceparent;
  try {
    await deps.backbone.publish(events);
    publish?.published(events.length);
    await deps.store.outbox.remove(committed.flatMap((c) => [c.outboxId, c.feed.outboxId]));
  } catch (err) {
    publish?.fail(err);
    deps.logger.warn({ err, messageId: committed[0]?.notification.messageId }, 'notification publish failed; the outbox relay will retry');
  }
}
