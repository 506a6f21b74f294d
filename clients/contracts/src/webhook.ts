import { z } from 'zod';
import { NotificationResponseSchema } from './notification.ts';
import { dateTimeString, nonNegativeInt32, ulidString } from './primitives.ts';
import { component, described } from './registry.ts';

/**
 * The webhooks extension: a principal registers HTTPS endpoints that receive its notifications by
 * signed POST (docs/interface.md, "Extensions": webhooks), lists and removes them, and reads and
 * redelivers the deliveries that failed every attempt (its dead letters).
 */

/** Longest webhook URL accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;
/** A chosen signing secret: 16 to 256 printable ASCII characters (space to tilde). */
export const WEBHOOK_SECRET_PATTERN = /^[\x20-\x7E]{16,256}$/;
/** Most delivery IDs one redelivery request names. */
export const MAX_REDELIVERY_IDS = 100;

export const WebhookSchema = component(
  z.strictObject({
    webhookId: ulidString(),
    url: described(z.string(), 'Where deliveries are POSTed, as the service parsed it at registration.'),
    createdAt: dateTimeString(),
  }),
  'Webhook',
  'A webhook of the caller: an HTTPS endpoint that receives the caller\'s notifications by signed POST (extension). Its secret is never shown again after registration.',
);
export type Webhook = z.infer<typeof WebhookSchema>;

export const CreateWebhookRequestSchema = component(
  z.strictObject({
    url: described(
      z.string().min(1).max(MAX_WEBHOOK_URL_LENGTH),
      '`https://` URL of the receiver (plain `http://` only to loopback where the service allows loopback); no credentials, no fragment, and no private, loopback or link-local address.',
    ),
    secret: described(
      z.string().regex(WEBHOOK_SECRET_PATTERN).optional(),
      'The HMAC-SHA256 key of the delivery signatures: 16 to 256 printable ASCII characters. When absent the service makes one (32 random bytes, base64url).',
    ),
  }),
  'CreateWebhookRequest',
  'Registers a webhook for the caller (extension).',
);
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequestSchema>;

export const CreateWebhookResponseSchema = component(
  z.strictObject({
    webhook: WebhookSchema,
    secret: described(z.string(), 'The signing secret, given or made: shown in this answer only; keep it with the receiver.'),
  }),
  'CreateWebhookResponse',
  'The registered webhook and its signing secret (extension).',
);
export type CreateWebhookResponse = z.infer<typeof CreateWebhookResponseSchema>;

export const WebhookListResponseSchema = component(
  z.strictObject({ items: described(z.array(WebhookSchema), 'The caller\'s webhooks, oldest first.') }),
  'WebhookListResponse',
  'The caller\'s webhooks (extension).',
);
export type WebhookListResponse = z.infer<typeof WebhookListResponseSchema>;

const DEAD_LETTER_STATES = ['dead', 'redelivering'] as const;
export const WebhookDeadLetterStateSchema = component(
  z.enum(DEAD_LETTER_STATES),
  'WebhookDeadLetterState',
  '`dead`: every attempt failed and it waits for a redelivery request; `redelivering`: asked for again and not yet delivered.',
);
export type WebhookDeadLetterState = z.infer<typeof WebhookDeadLetterStateSchema>;

export const WebhookDeadLetterSchema = component(
  z.strictObject({
    deliveryId: described(z.string(), 'The delivery\'s ID (`<webhookId>.<notificationId>`), the same on every attempt and redelivery.'),
    state: WebhookDeadLetterStateSchema,
    attempts: described(nonNegativeInt32(), 'Attempts made so far, redeliveries included.'),
    lastError: described(z.string(), 'What the last attempt met: an HTTP status, a timeout, a refused address.'),
    deadAt: described(dateTimeString(), 'When the delivery was given up.'),
    notification: NotificationResponseSchema,
  }),
  'WebhookDeadLetter',
  'A delivery every attempt of which failed, with its notification as the repository inbox shows it (extension).',
);
export type WebhookDeadLetter = z.infer<typeof WebhookDeadLetterSchema>;

export const WebhookDeadLetterPageResponseSchema = component(
  z.strictObject({
    items: described(z.array(WebhookDeadLetterSchema), 'Dead letters in the order they died (`deadAt`, then `deliveryId`).'),
    nextCursor: described(z.string().nullable().optional(), 'Pass as `cursor` for the next page; null when no more dead letters follow.'),
  }),
  'WebhookDeadLetterPageResponse',
  'A page of a webhook\'s dead letters (extension).',
);
export type WebhookDeadLetterPageResponse = z.infer<typeof WebhookDeadLetterPageResponseSchema>;

export const RedeliverWebhookRequestSchema = component(
  z.strictObject({
    deliveryIds: described(
      z.array(z.string().min(1).max(256)).min(1).max(MAX_REDELIVERY_IDS).optional(),
      `The dead letters to send again (1 to ${MAX_REDELIVERY_IDS} delivery IDs); absent: every dead letter of the webhook.`,
    ),
  }),
  'RedeliverWebhookRequest',
  'Asks for dead letters to be delivered again (extension).',
);
export type RedeliverWebhookRequest = z.infer<typeof RedeliverWebhookRequestSchema>;

export const RedeliverWebhookResponseSchema = component(
  z.strictObject({
    redelivering: described(
      z.array(z.string()),
      'The delivery IDs queued for delivery again; a named ID that is not a dead letter in state `dead` of this webhook is left out.',
    ),
  }),
  'RedeliverWebhookResponse',
  'The dead letters now waiting for redelivery (extension).',
);
export type RedeliverWebhookResponse = z.infer<typeof RedeliverWebhookResponseSchema>;
