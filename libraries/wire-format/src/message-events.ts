import type { BackboneEvent } from '@chat/backbone';
import type { MessageRow } from '@chat/store';
import { messageJson } from './message.wire.ts';

/** What the backbone needs to know of a committed message. */
export interface CommittedMessage {
  roomId: string;
  /** The message's room seq. */
  seq: number;
  messageId: string;
  /** Whether the message mentions anyone (its `mentions` is not empty). */
  mentionsSomeone: boolean;
}

/** The data of a `mentions` event: which message to fan out (the notifier reads the rest from PostgreSQL). */
interface MentionEventData {
  messageId: string;
}

/**
 * The events a committed message is published as: its `messages` event (data: its MessageResponse
 * JSON, `payload`) for the stream gateways, and, when it mentions anyone, a small `mentions` event
 * for the notifier, so the notifier reads only the messages it has work for. `traceparent` (the
 * publish span's, when tracing is on) goes into both, beside the data, never in it: the gateways
 * send the data to clients as it is.
 */
export function committedMessageEvents(message: CommittedMessage, payload: string, traceparent?: string): BackboneEvent[] {
  const messageEvent = traced({ channel: 'messages', scopeKey: message.roomId, seq: message.seq, data: payload }, traceparent);
  if (!message.mentionsSomeone) return [messageEvent];
  const mention: MentionEventData = { messageId: message.messageId };
  return [messageEvent, traced({ channel: 'mentions', scopeKey: message.roomId, seq: message.seq, data: JSON.stringify(mention) }, traceparent)];
}

/** The event with its trace, or as it is: an untraced event has no `traceparent` key at all. */
function traced(event: BackboneEvent, traceparent: string | undefined): BackboneEvent {
  if (traceparent !== undefined) event.traceparent = traceparent;
  return event;
}

/** The same from a stored message (the outbox relay's case for an entry stored without payload). */
export function storedMessageEvents(row: MessageRow, traceparent?: string): BackboneEvent[] {
  const mentionsSomeone = (row.mentions?.length ?? 0) > 0;
  return committedMessageEvents({ roomId: row.roomId, seq: row.seq, messageId: row.messageId, mentionsSomeone }, messageJson(row), traceparent);
}

/**
 * The same from a stored payload alone (an outbox entry stored with its MessageResponse JSON).
 * Throws if the payload is not a MessageResponse.
 */
export function committedMessageEventsFromPayload(roomId: string, seq: number, payload: string, traceparent?: string): BackboneEvent[] {
  const parsed = JSON.parse(payload) as { messageId?: unknown; mentions?: unknown };
  if (typeof parsed.messageId !== 'string') throw new Error(`message payload of ${roomId}#${seq} has no messageId`);
  const mentionsSomeone = Array.isArray(parsed.mentions) && parsed.mentions.length > 0;
  return committedMessageEvents({ roomId, seq, messageId: parsed.messageId, mentionsSomeone }, payload, traceparent);
}

/** Reads a `mentions` event's data; throws on anything else. */
export function parseMentionEventData(data: string): MentionEventData {
  const parsed = JSON.parse(data) as { messageId?: unknown };
  if (typeof parsed.messageId !== 'string') throw new Error('mentions event without a messageId');
  return { messageId: parsed.messageId };
}
