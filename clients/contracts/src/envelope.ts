import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from './errors.ts';
import { component, described } from './registry.ts';

/** The error object inside every error response (spec section 7). */
export const ErrorBodySchema = component(
  z.strictObject({
    code: described(z.enum(ERROR_CODES), 'One of the error codes of spec section 7.'),
    message: described(z.string(), 'Human-readable; never carries secrets or internals.'),
    requestId: described(z.string(), 'Same value as the X-Request-Id response header.'),
  }),
  'ErrorBody',
  'What went wrong.',
);
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

export const ErrorEnvelopeSchema = component(
  z.strictObject({ error: ErrorBodySchema }),
  'ErrorEnvelope',
  'The one structured envelope of every error response.',
);
export type ErrorEnvelope = z.infer<typeof ErrorEnvelopeSchema>;

/** Builds the envelope for an error response. */
export function errorEnvelope(code: ErrorCode, message: string, requestId: string): ErrorEnvelope {
  return { error: { code, message, requestId } };
}
