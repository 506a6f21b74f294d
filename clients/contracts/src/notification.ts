import { z } from 'zod';
import { MentionPrincipalKindSchema, SenderKindSchema } from './enums.ts';
import { MentionSpanSchema } from './mention.ts';
import { MessageResponseSchema } from './message.ts';
import { dateTimeString, ulidString } from './primitives.ts';
import { component, described } from './registry.ts';

/** The stored form of a notification: a NotificationResponse without `cursor` and `acknowledged`. */
export const NotificationSchema = component(
  z.strictObject({
    notificationId: z.string(),
    targetKind: MentionPrincipalKindSchema,
    targetId: z.string(),
    repositoryId: ulidString(),
    roomId: z.string(),
    messageId: z.string(),
    senderKind: SenderKindSchema,
    senderId: z.string(),
    spans: z.array(MentionSpanSchema),
    createdAt: dateTimeString(),
    branchId: ulidString().nullable().optional(),
  }),
  'Notification',
  'The stored form of one mention of one principal.',
);
export type Notification = z.infer<typeof NotificationSchema>;

/** A notification as the API returns it (inbox pages and `notification` stream events). */
export const NotificationResponseSchema = component(
  NotificationSchema.extend({
    cursor: described(z.string(), 'Opaque inbox cursor of this notification.'),
    acknowledged: z.boolean(),
  }),
  'NotificationResponse',
  'One mention of the caller, as listed in the inbox.',
);
export type NotificationResponse = z.infer<typeof NotificationResponseSchema>;

/** A `notification` event of the principal inbox stream: with `include=message`, the notified message too. */
export const FeedNotificationResponseSchema = component(
  NotificationResponseSchema.extend({
    message: described(MessageResponseSchema.optional(), 'The notified message, when the stream was opened with `include=message`.'),
  }),
  'FeedNotificationResponse',
  'One mention of the caller on its principal inbox stream, with its message when asked for.',
);
export type FeedNotificationResponse = z.infer<typeof FeedNotificationResponseSchema>;

export const AcknowledgeInboxRequestSchema = component(
  z.strictObject({
    throughCursor: described(z.string(), 'Move the checkpoint forward through this inbox cursor.'),
    expectedCursor: described(
      z.string().nullable().optional(),
      'When given, must equal the current checkpoint, else 409 INBOX_CHECKPOINT_STALE.',
    ),
  }),
  'AcknowledgeInboxRequest',
  'Moves the inbox checkpoint.',
);
export type AcknowledgeInboxRequest = z.infer<typeof AcknowledgeInboxRequestSchema>;

export const AcknowledgeInboxResponseSchema = component(
  z.strictObject({
    acknowledgedCursor: z.string(),
    replayed: described(z.boolean(), 'True when the request had already been applied.'),
  }),
  'AcknowledgeInboxResponse',
  'The inbox checkpoint after an acknowledgement.',
);
export type AcknowledgeInboxResponse = z.infer<typeof AcknowledgeInboxResponseSchema>;
