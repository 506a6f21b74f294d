import type { Channel, DeliveredEvent } from '../backbone.ts';
import { flatToRecord } from './flat-record.ts';

/**
 * Field list written by XADD for one event; the reader below is its inverse. `traceparent` is written
 * only when the event has one, so an untraced event's entry is what it always was.
 */
export function eventFields(scopeKey: string, seq: number, data: string, traceparent?: string): string[] {
  const fields = ['scopeKey', scopeKey, 'seq', String(seq), 'data', data];
  if (traceparent !== undefined) fields.push('traceparent', traceparent);
  return fields;
}

/**
 * Turns a stream entry back into an event. Anything malformed yields `null` and is skipped: the
 * backbone may drop an entry (readers recover by seq) but must never hand out a made-up event.
 */
export function toDeliveredEvent(channel: Channel, entryId: string, fields: unknown): DeliveredEvent | null {
  const record = flatToRecord(fields);
  const { scopeKey, seq, data, traceparent } = record;
  const seqNumber = Number(seq);
  // Every event's data is a JSON document; an empty one is what a publisher that had none would write.
  if (typeof scopeKey !== 'string' || typeof data !== 'string' || data === '' || !Number.isSafeInteger(seqNumber)) return null;
  // An entry without a trace (untraced, or from an older publisher) is read as it always was.
  if (typeof traceparent !== 'string') return { channel, scopeKey, seq: seqNumber, data, entryId };
  return { channel, scopeKey, seq: seqNumber, data, traceparent, entryId };
}

export type RawEntry = [id: string, fields: unknown];
export type RawStreamReply = [key: string, entries: RawEntry[]][];
