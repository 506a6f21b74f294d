import { z } from 'zod';
import { MessageResponseSchema } from './message.ts';
import { NotificationResponseSchema } from './notification.ts';
import { component, described } from './registry.ts';

/** A page of messages, oldest first by (`createdAt`, `messageId`). */
export const MessagePageResponseSchema = component(
  z.strictObject({
    items: z.array(MessageResponseSchema),
    nextCursor: described(z.string().nullable().optional(), 'Cursor of the next page; null when there is none yet.'),
  }),
  'MessagePageResponse',
  'A page of messages, oldest first.',
);
export type MessagePageResponse = z.infer<typeof MessagePageResponseSchema>;

/** A page of the caller's inbox, with the caller's acknowledged checkpoint. */
export const InboxPageResponseSchema = component(
  z.strictObject({
    items: z.array(NotificationResponseSchema),
    nextCursor: described(z.string().nullable().optional(), 'Cursor of the next page; null when there is none yet.'),
    acknowledgedCursor: described(z.string().nullable().optional(), 'The current acknowledged checkpoint, if any.'),
  }),
  'InboxPageResponse',
  'A page of the caller\'s inbox, oldest first.',
);
export type InboxPageResponse = z.infer<typeof InboxPageResponseSchema>;
