import { z } from 'zod';
import { MessageResponseSchema } from './message.ts';
import { component, described } from './registry.ts';

/**
 * A page of the message-history extension (listRepositoryMessageHistory / listBranchMessageHistory):
 * a contiguous run of a room's messages, oldest first by (`createdAt`, `messageId`) like every
 * page, with the durable cursor of each item, so a client can start a stream or another read at any
 * message it shows (a permalink names a message by its cursor).
 */
export const MessageHistoryPageResponseSchema = component(
  z.strictObject({
    items: z.array(MessageResponseSchema),
    cursors: described(
      z.array(z.string()),
      '`cursors[i]` is the durable cursor of `items[i]`, equal to the SSE id of its `message` event: `cursor` (list, stream) or `after` continues after it, `before` continues before it, `at` starts at it.',
    ),
    olderCursor: described(z.string().nullable().optional(), 'Pass as `before` to read the messages just older than this page; null when there are none.'),
    newerCursor: described(
      z.string().nullable().optional(),
      'Pass as `after` to read the messages just newer than this page; null when there were none when the page was read (follow the stream from the last item\'s cursor to see later ones).',
    ),
  }),
  'MessageHistoryPageResponse',
  'A run of consecutive messages, oldest first, with the durable cursor of each (extension).',
);
export type MessageHistoryPageResponse = z.infer<typeof MessageHistoryPageResponseSchema>;
