import type { CoreClient, MentionTarget as CoreTarget } from '@chat/authz-client';
import type { Backbone, BackboneEvent } from '@chat/backbone';
import type { Logger } from '@chat/observability';
import type { CreatedNotification, MentionFanoutRow, MessageRow, Store } from '@chat/store';
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
 * now (asked live of core), carrying all of that target's spans, written in the transaction that
 * removes the message's fan-out row. Running it again for a settled row writes nothing.
 * @throws AppError AUTHORIZATION_UNAVAILABLE / STORE_UNAVAILABLE when a dependency is down (retry later);
 * PoisonFanoutError when the row can never succeed; FanoutSettledError when the row is no longer pending.
 */
export async function fanoutMessage(deps: FanoutDeps, row: MentionFanoutRow): Promise<FanoutResult> {
  const [result] = await writeFanoutRun(deps, [await prepareFanout(deps, row)]);
  return result!;
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

/**
 * Writes the prepared fanouts of consecutive messages of one room, starting with its head, in one
 * transaction that also removes their fan-out rows (see the store's `appendFanoutRun`), then
 * publishes the notifications. One result per message, in run order.
 * @throws FanoutSettledError when a row of the run is no longer pending: nothing is written.
 */
export async function writeFanoutRun(deps: FanoutDeps, run: PreparedFanout[]): Promise<FanoutResult[]> {
  const outcome = await deps.store.notifications.appendFanoutRun(
    run.map(({ message, allowed }) => ({
      messageId: message.messageId,
      notifications: allowed.map((target) => ({
        owner: { repositoryId: message.repositoryId, principalKind: target.kind, principalId: target.id },
        input: {
          messageId: message.messageId,
          roomId: message.roomId,
          branchId: message.branchId,
          senderKind: message.senderKind,
          senderId: message.senderId,
          spans: target.spans,
        },
      })),
      ...(allowed.length > 0 ? { feedMessage: messageJson(message) } : {}),
    })),
    { now: deps.clock(), outboxPayload: storedNotificationJson },
  );
  if (outcome.created.length > 0) await publishAfterCommit(deps, outcome.created);
  const createdOf = new Map<string, number>();
  for (const { notification } of outcome.created) createdOf.set(notification.messageId, (createdOf.get(notification.messageId) ?? 0) + 1);
  return run.map(({ message, targets, allowed }) => ({ created: createdOf.get(message.messageId) ?? 0, denied: targets.length - allowed.length, message }));
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
async function publishAfterCommit(deps: FanoutDeps, committed: CreatedNotification[]): Promise<void> {
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
