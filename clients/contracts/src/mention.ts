import { z } from 'zod';
import { MentionPrincipalKindSchema } from './enums.ts';
import { nonNegativeInt32 } from './primitives.ts';
import { component, described } from './registry.ts';

/** A structured mention: who is mentioned and which UTF-8 byte range of the body names them. */
export const MentionBindingSchema = component(
  z.strictObject({
    principalKind: MentionPrincipalKindSchema,
    principalId: z.string(),
    startByte: described(nonNegativeInt32(), 'Offset of the first byte of the mention in the UTF-8 body.'),
    endByte: described(nonNegativeInt32(), 'Offset just past the last byte of the mention in the UTF-8 body.'),
  }),
  'MentionBinding',
  'A structured mention of a human or bot, used in requests and responses.',
);
export type MentionBinding = z.infer<typeof MentionBindingSchema>;

/** A byte range of a message body that mentions the notification's target. */
export const MentionSpanSchema = component(
  z.strictObject({
    startByte: nonNegativeInt32(),
    endByte: nonNegativeInt32(),
  }),
  'MentionSpan',
  'A UTF-8 byte range of a message body.',
);
export type MentionSpan = z.infer<typeof MentionSpanSchema>;
