import { z } from 'zod';
import { dateTimeString } from './primitives.ts';
import { component, described } from './registry.ts';

/** The only `handoff` reason (spec section 6). */
const HANDOFF_REASON = 'stream_rotation';

/** A short machine word, e.g. `access_changed` or `authorization_unavailable`. */
const REAUTHORIZE_REASON_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

export const HeartbeatEventDataSchema = component(
  z.strictObject({
    serverTime: described(dateTimeString(), 'Server clock when the heartbeat was sent.'),
  }),
  'HeartbeatEventData',
  'Data of a `heartbeat` event: liveness only; never advances resume state.',
);
export type HeartbeatEventData = z.infer<typeof HeartbeatEventDataSchema>;

export const HandoffEventDataSchema = component(
  z.strictObject({ reason: z.literal(HANDOFF_REASON) }),
  'HandoffEventData',
  'Data of a `handoff` event: planned rotation; reconnect from the last durable cursor.',
);
export type HandoffEventData = z.infer<typeof HandoffEventDataSchema>;

export const ReauthorizeEventDataSchema = component(
  z.strictObject({
    reason: described(z.string().regex(REAUTHORIZE_REASON_PATTERN), 'Short machine word saying why.'),
  }),
  'ReauthorizeEventData',
  'Data of a `reauthorize` event: the server closes the stream; refresh authority before reconnecting.',
);
export type ReauthorizeEventData = z.infer<typeof ReauthorizeEventDataSchema>;
