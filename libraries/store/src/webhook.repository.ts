import { and, asc, eq, gt, inArray, lt, or, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { inboxes, notifications, type NotificationRow } from './inbox.schema.ts';
import { feedKey, type FeedPrincipal } from './principal-feed.repository.ts';
import { rowsOf } from './sql-script.ts';
import { storeCall } from './store-errors.ts';
import { webhookDeadLetters, webhookLanes, webhooks, type WebhookRow } from './webhook.schema.ts';
import {
  WebhookLimitError,
  type DeadLetterPosition,
  type LaneClaim,
  type NewWebhook,
  type WebhookDeadLetter,
  type WebhookLaneKey,
  type WebhookLaneWork,
  type WebhookRedelivery,
} from './webhook.types.ts';

export { WebhookLimitError, type DeadLetterPosition, type LaneClaim, type NewWebhook, type WebhookDeadLetter, type WebhookLaneKey, type WebhookLaneWork, type WebhookRedelivery } from './webhook.types.ts';

/** Longest error text kept. */
const MAX_ERROR_LENGTH = 2000;

/**
 * Webhook registrations, their delivery lanes and their dead letters.
 *
 * A webhook's notifications come from its principal's feed: `dispatch` hands the feed positions after
 * `dispatched_feed_seq` to lanes (one per inbox), and each lane delivers its inbox's notifications in
 * seq order from its own position. A lane is run by whoever claims it (a lease, so a crashed worker's
 * claim lapses); a failed head waits for its retry alone, and is dead-lettered after a bounded number
 * of attempts, which lets the lane go on.
 */
export interface WebhookRepository {
  /**
   * Registers a webhook that starts at the end of its principal's feed.
   * @throws WebhookLimitError when the principal already holds `maxPerPrincipal`.
   */
  create(input: NewWebhook): Promise<WebhookRow>;
  find(webhookId: string): Promise<WebhookRow | null>;
  /** The principal's webhooks, oldest first. */
  listByPrincipal(principal: FeedPrincipal): Promise<WebhookRow[]>;
  /** Removes a webhook with its lanes and dead letters; false when the principal holds no such webhook. */
  remove(webhookId: string, principal: FeedPrincipal): Promise<boolean>;
  /** Webhooks whose principal's feed has positions not yet handed to lanes. */
  listBehind(limit: number): Promise<string[]>;
  /**
   * Hands up to `limit` feed positions after the webhook's dispatched position to their lanes
   * (creating a lane at the first notification it gets) and moves the position, in one transaction.
   * Returns the lanes handed work; none when another worker is dispatching the webhook right now.
   */
  dispatch(webhookId: string, options: { now: Date; limit: number }): Promise<WebhookLaneKey[]>;
  /** Lanes with notifications after their position whose next try is due, earliest first. */
  dueLanes(options: { now: Date; limit: number }): Promise<WebhookLaneKey[]>;
  /**
   * Claims a lane whose next try is due and whose inbox holds notifications after its position; null
   * when it is held, waiting for a retry, caught up, or gone. A caught-up lane costs one statement:
   * lanes are queued on every dispatch that reaches them, often after their run has sent it all.
   */
  claimLane(key: WebhookLaneKey, options: LaneClaim): Promise<WebhookLaneWork | null>;
  /**
   * The notification at `seq` is delivered: the lane moves past it and its attempts start over. With
   * `holdUntil`, the claim is renewed to then, so a long batch needs no long lease.
   */
  markDelivered(key: WebhookLaneKey, seq: number, holdUntil?: Date): Promise<void>;
  /**
   * Gives a claimed lane back, to be tried again at `nextAttemptAt`; with `deliveredSeq`, moves it
   * past that notification first, as `markDelivered` does, in the same statement. Returns whether its
   * inbox holds notifications after the lane's position (arrived while it ran): then the caller runs
   * it again.
   */
  releaseLane(key: WebhookLaneKey, nextAttemptAt: Date, deliveredSeq?: number): Promise<boolean>;
  /** Records a failed attempt at the lane's head; returns the head's failed attempts so far. */
  recordFailure(key: WebhookLaneKey, options: { error: string; retryAt: Date }): Promise<number>;
  /** Moves the lane's head to the dead letters and the lane past it, in one transaction. */
  deadLetter(key: WebhookLaneKey, letter: { notification: NotificationRow; deliveryId: string; attempts: number; error: string; now: Date }): Promise<void>;
  /** A webhook's dead letters in the order they died, after `after`. */
  listDeadLetters(webhookId: string, options: { after?: DeadLetterPosition; limit: number }): Promise<WebhookDeadLetter[]>;
  /**
   * Asks for dead letters again: those named (all of the webhook's when `deliveryIds` is absent) that
   * are dead. Returns the delivery IDs now waiting for redelivery.
   */
  requestRedelivery(webhookId: string, options: { deliveryIds?: string[]; now: Date }): Promise<string[]>;
  /** Claims redeliveries that are due, for `leaseMs`. */
  claimRedeliveries(options: { now: Date; leaseMs: number; limit: number }): Promise<WebhookRedelivery[]>;
  /** The redelivery went through: the dead letter is gone. */
  completeRedelivery(deliveryId: string): Promise<void>;
  /** A redelivery failed: tried again at `retryAt`, or dead again after `maxAttempts`. */
  failRedelivery(deliveryId: string, options: { error: string; retryAt: Date; maxAttempts: number }): Promise<{ dead: boolean }>;
  /** Lanes with work waiting and dead letters, for metrics. */
  counts(): Promise<{ lanesBehind: number; deadLetters: number }>;
}

export function createWebhookRepository(db: ChatDb): WebhookRepository {
  const laneWhere = (key: WebhookLaneKey) => and(eq(webhookLanes.webhookId, key.webhookId), eq(webhookLanes.inboxKey, key.inboxKey));
  return {
    create: (input) => storeCall(() => createInTransaction(db, input)),
    find: (webhookId) =>
      storeCall(async () => {
        const [row] = await db.select().from(webhooks).where(eq(webhooks.webhookId, webhookId)).limit(1);
        return row ?? null;
      }),
    listByPrincipal: (principal) =>
      storeCall(() =>
        db
          .select()
          .from(webhooks)
          .where(and(eq(webhooks.principalKind, principal.principalKind), eq(webhooks.principalId, principal.principalId)))
          .orderBy(asc(webhooks.createdAt), asc(webhooks.webhookId)),
      ),
    remove: (webhookId, principal) =>
      storeCall(async () => {
        const removed = await db
          .delete(webhooks)
          .where(and(eq(webhooks.webhookId, webhookId), eq(webhooks.principalKind, principal.principalKind), eq(webhooks.principalId, principal.principalId)))
          .returning({ webhookId: webhooks.webhookId });
        return removed.length > 0;
      }),
    listBehind: (limit) =>
      storeCall(async () => {
        const rows = rowsOf<{ webhook_id: string }>(
          await db.execute(sql`SELECT w.webhook_id FROM webhooks w
            JOIN principal_feeds f ON f.feed_key = 'feed:' || w.principal_kind || ':' || w.principal_id
            WHERE f.last_seq > w.dispatched_feed_seq
            LIMIT ${limit}`),
        );
        return rows.map((r) => r.webhook_id);
      }),
    dispatch: (webhookId, options) => storeCall(() => dispatchInTransaction(db, webhookId, options)),
    dueLanes: ({ now, limit }) =>
      storeCall(async () => {
        const rows = rowsOf<{ webhook_id: string; inbox_key: string }>(
          await db.execute(sql`SELECT l.webhook_id, l.inbox_key FROM webhook_lanes l
            JOIN inboxes i ON i.inbox_key = l.inbox_key
            WHERE i.last_seq > l.delivered_seq AND l.next_attempt_at <= ${now}
            ORDER BY l.next_attempt_at
            LIMIT ${limit}`),
        );
        return rows.map((r) => ({ webhookId: r.webhook_id, inboxKey: r.inbox_key }));
      }),
    claimLane: (key, { now, leaseMs, limit }) =>
      storeCall(async () => {
        const [lane] = await db
          .update(webhookLanes)
          .set({ nextAttemptAt: new Date(now.getTime() + leaseMs) })
          .where(
            and(
              laneWhere(key),
              sql`${webhookLanes.nextAttemptAt} <= ${now}`,
              sql`EXISTS (SELECT 1 FROM inboxes i WHERE i.inbox_key = ${webhookLanes.inboxKey} AND i.last_seq > ${webhookLanes.deliveredSeq})`,
            ),
          )
          .returning();
        if (!lane) return null;
        const [[owner], pending] = await Promise.all([
          db
            .select({ webhook: webhooks, ackSeq: inboxes.ackSeq })
            .from(webhooks)
            .innerJoin(inboxes, eq(inboxes.inboxKey, key.inboxKey))
            .where(eq(webhooks.webhookId, key.webhookId))
            .limit(1),
          db
            .select()
            .from(notifications)
            .where(and(eq(notifications.inboxKey, key.inboxKey), gt(notifications.seq, lane.deliveredSeq)))
            .orderBy(asc(notifications.seq))
            .limit(limit),
        ]);
        if (!owner) return null;
        return { lane, webhook: owner.webhook, notifications: pending, inboxAckSeq: owner.ackSeq };
      }),
    markDelivered: (key, seq, holdUntil) =>
      storeCall(async () => {
        await db
          .update(webhookLanes)
          .set({ deliveredSeq: seq, attempts: 0, lastError: null, ...(holdUntil ? { nextAttemptAt: holdUntil } : {}) })
          .where(and(laneWhere(key), lt(webhookLanes.deliveredSeq, seq)));
      }),
    releaseLane: (key, nextAttemptAt, deliveredSeq = -1) =>
      storeCall(async () => {
        const moved = sql`l.delivered_seq < ${deliveredSeq}::bigint`;
        const [row] = rowsOf<{ more: boolean }>(
          await db.execute(sql`UPDATE webhook_lanes l SET next_attempt_at = ${nextAttemptAt},
              delivered_seq = GREATEST(l.delivered_seq, ${deliveredSeq}::bigint),
              attempts = CASE WHEN ${moved} THEN 0 ELSE l.attempts END,
              last_error = CASE WHEN ${moved} THEN NULL ELSE l.last_error END
            FROM inboxes i
            WHERE l.webhook_id = ${key.webhookId} AND l.inbox_key = ${key.inboxKey} AND i.inbox_key = l.inbox_key
            RETURNING i.last_seq > l.delivered_seq AS more`),
        );
        return row?.more === true;
      }),
    recordFailure: (key, { error, retryAt }) =>
      storeCall(async () => {
        const [row] = await db
          .update(webhookLanes)
          .set({ attempts: sql`${webhookLanes.attempts} + 1`, lastError: error.slice(0, MAX_ERROR_LENGTH), nextAttemptAt: retryAt })
          .where(laneWhere(key))
          .returning({ attempts: webhookLanes.attempts });
        return row?.attempts ?? 0;
      }),
    deadLetter: (key, letter) =>
      storeCall(() =>
        db.transaction(async (tx) => {
          await tx
            .insert(webhookDeadLetters)
            .values({
              deliveryId: letter.deliveryId,
              webhookId: key.webhookId,
              notificationId: letter.notification.notificationId,
              repositoryId: letter.notification.repositoryId,
              attempts: letter.attempts,
              lastError: letter.error.slice(0, MAX_ERROR_LENGTH),
              deadAt: letter.now,
            })
            .onConflictDoNothing({ target: webhookDeadLetters.deliveryId });
          await tx
            .update(webhookLanes)
            .set({ deliveredSeq: letter.notification.seq, attempts: 0, lastError: null })
            .where(and(laneWhere(key), lt(webhookLanes.deliveredSeq, letter.notification.seq)));
        }),
      ),
    listDeadLetters: (webhookId, { after, limit }) =>
      storeCall(async () => {
        const rows = await db
          .select({ deadLetter: webhookDeadLetters, notification: notifications })
          .from(webhookDeadLetters)
          .innerJoin(notifications, eq(notifications.notificationId, webhookDeadLetters.notificationId))
          .where(
            and(
              eq(webhookDeadLetters.webhookId, webhookId),
              after
                ? or(gt(webhookDeadLetters.deadAt, after.deadAt), and(eq(webhookDeadLetters.deadAt, after.deadAt), gt(webhookDeadLetters.deliveryId, after.deliveryId)))
                : undefined,
            ),
          )
          .orderBy(asc(webhookDeadLetters.deadAt), asc(webhookDeadLetters.deliveryId))
          .limit(limit);
        return rows;
      }),
    requestRedelivery: (webhookId, { deliveryIds, now }) =>
      storeCall(async () => {
        if (deliveryIds && deliveryIds.length === 0) return [];
        const rows = await db
          .update(webhookDeadLetters)
          .set({ state: 'redelivering', redeliveryAttempts: 0, nextAttemptAt: now })
          .where(
            and(
              eq(webhookDeadLetters.webhookId, webhookId),
              eq(webhookDeadLetters.state, 'dead'),
              deliveryIds ? inArray(webhookDeadLetters.deliveryId, deliveryIds) : undefined,
            ),
          )
          .returning({ deliveryId: webhookDeadLetters.deliveryId });
        return rows.map((r) => r.deliveryId);
      }),
    claimRedeliveries: ({ now, leaseMs, limit }) =>
      storeCall(async () => {
        const claimed = rowsOf<{ delivery_id: string }>(
          await db.execute(sql`UPDATE webhook_dead_letters SET next_attempt_at = ${new Date(now.getTime() + leaseMs)}
            WHERE delivery_id IN (
              SELECT delivery_id FROM webhook_dead_letters
              WHERE state = 'redelivering' AND next_attempt_at <= ${now}
              ORDER BY next_attempt_at LIMIT ${limit}
              FOR UPDATE SKIP LOCKED)
            RETURNING delivery_id`),
        );
        if (claimed.length === 0) return [];
        return db
          .select({ deadLetter: webhookDeadLetters, notification: notifications, webhook: webhooks, inboxAckSeq: inboxes.ackSeq })
          .from(webhookDeadLetters)
          .innerJoin(notifications, eq(notifications.notificationId, webhookDeadLetters.notificationId))
          .innerJoin(inboxes, eq(inboxes.inboxKey, notifications.inboxKey))
          .innerJoin(webhooks, eq(webhooks.webhookId, webhookDeadLetters.webhookId))
          .where(inArray(webhookDeadLetters.deliveryId, claimed.map((c) => c.delivery_id)));
      }),
    completeRedelivery: (deliveryId) =>
      storeCall(async () => {
        await db.delete(webhookDeadLetters).where(eq(webhookDeadLetters.deliveryId, deliveryId));
      }),
    failRedelivery: (deliveryId, { error, retryAt, maxAttempts }) =>
      storeCall(async () => {
        const [row] = await db
          .update(webhookDeadLetters)
          .set({
            redeliveryAttempts: sql`${webhookDeadLetters.redeliveryAttempts} + 1`,
            attempts: sql`${webhookDeadLetters.attempts} + 1`,
            lastError: error.slice(0, MAX_ERROR_LENGTH),
            nextAttemptAt: retryAt,
            state: sql`CASE WHEN ${webhookDeadLetters.redeliveryAttempts} + 1 >= ${maxAttempts} THEN 'dead' ELSE 'redelivering' END`,
          })
          .where(and(eq(webhookDeadLetters.deliveryId, deliveryId), eq(webhookDeadLetters.state, 'redelivering')))
          .returning({ state: webhookDeadLetters.state });
        return { dead: row?.state !== 'redelivering' };
      }),
    counts: () =>
      storeCall(async () => {
        const [row] = rowsOf<{ lanes_behind: number | string; dead_letters: number | string }>(
          await db.execute(sql`SELECT
            (SELECT count(*) FROM webhook_lanes l JOIN inboxes i ON i.inbox_key = l.inbox_key WHERE i.last_seq > l.delivered_seq) AS lanes_behind,
            (SELECT count(*) FROM webhook_dead_letters) AS dead_letters`),
        );
        return { lanesBehind: Number(row?.lanes_behind ?? 0), deadLetters: Number(row?.dead_letters ?? 0) };
      }),
  };
}

async function createInTransaction(db: ChatDb, input: NewWebhook): Promise<WebhookRow> {
  const { principal } = input;
  return db.transaction(async (tx) => {
    // Serializes one principal's registrations, so two at once cannot both pass the limit.
    await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${feedKey(principal)}))`);
    const [held] = rowsOf<{ n: number | string }>(
      await tx.execute(sql`SELECT count(*) AS n FROM webhooks WHERE principal_kind = ${principal.principalKind} AND principal_id = ${principal.principalId}`),
    );
    if (Number(held?.n ?? 0) >= input.maxPerPrincipal) throw new WebhookLimitError(input.maxPerPrincipal);
    const [feed] = rowsOf<{ last_seq: number | string }>(await tx.execute(sql`SELECT last_seq FROM principal_feeds WHERE feed_key = ${feedKey(principal)}`));
    const [row] = await tx
      .insert(webhooks)
      .values({
        webhookId: input.webhookId,
        principalKind: principal.principalKind,
        principalId: principal.principalId,
        url: input.url,
        secret: input.secret,
        createdAt: input.now,
        dispatchedFeedSeq: Number(feed?.last_seq ?? 0),
      })
      .returning();
    if (!row) throw new Error(`webhook ${input.webhookId} was not inserted`);
    return row;
  });
}

async function dispatchInTransaction(db: ChatDb, webhookId: string, { now, limit }: { now: Date; limit: number }): Promise<WebhookLaneKey[]> {
  return db.transaction(async (tx) => {
    const [webhook] = await tx.select().from(webhooks).where(eq(webhooks.webhookId, webhookId)).for('update', { skipLocked: true });
    if (!webhook) return [];
    const batch = rowsOf<{ inbox_key: string; repository_id: string; first_seq: number | string; last_feed_seq: number | string }>(
      await tx.execute(sql`SELECT inbox_key, repository_id, min(seq) AS first_seq, max(feed_seq) AS last_feed_seq FROM (
          SELECT inbox_key, repository_id, seq, feed_seq FROM notifications
          WHERE target_kind = ${webhook.principalKind} AND target_id = ${webhook.principalId} AND feed_seq > ${webhook.dispatchedFeedSeq}
          ORDER BY feed_seq LIMIT ${limit}) positions
        GROUP BY inbox_key, repository_id`),
    );
    if (batch.length === 0) return [];
    // A lane starts just before the first notification handed to it; a lane that exists keeps its position.
    await tx
      .insert(webhookLanes)
      .values(batch.map((b) => ({ webhookId, inboxKey: b.inbox_key, repositoryId: b.repository_id, deliveredSeq: Number(b.first_seq) - 1, nextAttemptAt: now })))
      .onConflictDoNothing({ target: [webhookLanes.webhookId, webhookLanes.inboxKey] });
    const reached = Math.max(...batch.map((b) => Number(b.last_feed_seq)));
    await tx.update(webhooks).set({ dispatchedFeedSeq: reached }).where(eq(webhooks.webhookId, webhookId));
    return batch.map((b) => ({ webhookId, inboxKey: b.inbox_key }));
  });
}
