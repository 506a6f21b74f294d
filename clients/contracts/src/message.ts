import { z } from 'zod';
import { SenderKindSchema, SubjectKindSchema } from './enums.ts';
import { MentionBindingSchema } from './mention.ts';
import { MAX_MESSAGE_BODY_BYTES, dateTimeString, nonNegativeInt32, ulidString, utf8ByteLength } from './primitives.ts';
import { component, described } from './registry.ts';

/** The only `renderPolicy` under which a client may display `renderedHtml` as HTML. */
export const SANITIZED_RENDER_POLICY = 'sanitized_markdown_html_v1';

/**
 * A stored body: 1–16,384 UTF-8 bytes. The character bound is implied by the byte bound (a UTF-16
 * code unit is never fewer bytes than one), so JSON Schema consumers get a sound approximation.
 */
function storedBodyMarkdown() {
  return described(
    z
      .string()
      .min(1)
      .max(MAX_MESSAGE_BODY_BYTES)
      .refine((body) => utf8ByteLength(body) <= MAX_MESSAGE_BODY_BYTES, {
        message: `must be at most ${MAX_MESSAGE_BODY_BYTES} UTF-8 bytes`,
      }),
    'Markdown source, 1–16,384 UTF-8 bytes. Never inject it as HTML.',
  );
}

/** Attribution fields: who and what allowed the append (spec section 2, Message). */
const attributionFields = {
  authorizationDecisionId: z.string().nullable().optional(),
  authorizingSubjectId: z.string().nullable().optional(),
  authorizingSubjectKind: SubjectKindSchema.nullable().optional(),
  botCredentialId: z.string().nullable().optional(),
  botGrantId: z.string().nullable().optional(),
};

/** The stored form of a message: a MessageResponse without the rendering fields. */
export const MessageSchema = component(
  z.strictObject({
    messageId: z.string(),
    roomId: z.string(),
    repositoryId: ulidString(),
    senderKind: SenderKindSchema,
    senderId: z.string(),
    requestId: z.string(),
    bodyMarkdown: storedBodyMarkdown(),
    bodyBytes: described(nonNegativeInt32(), 'Length of bodyMarkdown in UTF-8 bytes.'),
    createdAt: dateTimeString(),
    idempotencyKey: z.string(),
    mentions: z.array(MentionBindingSchema).optional(),
    branchId: ulidString().nullable().optional(),
    ...attributionFields,
  }),
  'Message',
  'The stored form of an immutable message.',
);
export type Message = z.infer<typeof MessageSchema>;

/** A message as the API returns it (REST bodies, pages and `message` stream events). */
export const MessageResponseSchema = component(
  MessageSchema.extend({
    renderPolicy: described(
      z.string(),
      `Display renderedHtml only when this is exactly "${SANITIZED_RENDER_POLICY}"; otherwise show escaped plain text.`,
    ),
    renderedHtml: described(z.string(), 'Server-sanitized HTML rendering of bodyMarkdown.'),
  }),
  'MessageResponse',
  'An immutable message with its server-sanitized rendering and attribution.',
);
export type MessageResponse = z.infer<typeof MessageResponseSchema>;

/**
 * Body of an append. Byte-length rules on `bodyMarkdown` are the domain's (it counts UTF-8 bytes
 * and answers MESSAGE_INVALID), so the schema only fixes the shape.
 */
export const AppendMessageRequestSchema = component(
  z.strictObject({
    bodyMarkdown: described(z.string(), 'Markdown source, 1–16,384 decoded UTF-8 bytes.'),
    mentions: z.array(MentionBindingSchema).optional(),
  }),
  'AppendMessageRequest',
  'A new message for a room.',
);
export type AppendMessageRequest = z.infer<typeof AppendMessageRequestSchema>;
