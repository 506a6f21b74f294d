/** What the webhook repository takes and gives: lanes, registrations, dead letters. */
import type { NotificationRow } from './inbox.schema.ts';
import type { FeedPrincipal } from './principal-feed.repository.ts';
import type { WebhookDeadLetterRow, WebhookLaneRow, WebhookRow } from './webhook.schema.ts';

/** A lane: the deliveries of one inbox (a repository) to one webhook, in the inbox's seq order. */
export interface WebhookLaneKey {
  webhookId: string;
  inboxKey: string;
}

export interface NewWebhook {
  webhookId: string;
  principal: FeedPrincipal;
  url: string;
  secret: string;
  now: Date;
  /** Registrations a principal may hold; the one past it is refused. */
  maxPerPrincipal: number;
}

/** The principal already holds `max` webhooks. */
export class WebhookLimitError extends Error {
  constructor(readonly max: number) {
    super(`a principal holds at most ${max} webhooks`);
    this.name = 'WebhookLimitError';
  }
}

/** A claimed lane, its webhook, and the lane's next notifications in seq order. */
export interface WebhookLaneWork {
  lane: WebhookLaneRow;
  webhook: WebhookRow;
  notifications: NotificationRow[];
  /** The inbox's acknowledged checkpoint, for each notification's `acknowledged`. */
  inboxAckSeq: number;
}

export interface LaneClaim {
  now: Date;
  /** How long nobody else runs the lane; a crashed worker's claim lapses after it. */
  leaseMs: number;
  /** Notifications read after the lane's position. */
  limit: number;
}

/** A dead letter, with the notification it holds. */
export interface WebhookDeadLetter {
  deadLetter: WebhookDeadLetterRow;
  notification: NotificationRow;
}

/** A dead letter claimed for redelivery, with its webhook and its inbox's checkpoint (for `acknowledged`). */
export interface WebhookRedelivery extends WebhookDeadLetter {
  webhook: WebhookRow;
  inboxAckSeq: number;
}

/** Where a page of dead letters starts: after this one. */
export interface DeadLetterPosition {
  deadAt: Date;
  deliveryId: string;
}
