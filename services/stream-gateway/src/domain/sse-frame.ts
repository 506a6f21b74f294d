/**
 * SSE framing. Only the server chooses ids and event names; data is JSON on one line. A raw CR, LF
 * or NUL in a field would let content forge events, so data is re-serialized if it ever carries
 * one, and U+2028/U+2029 (line breaks to some JavaScript consumers) are escaped as well.
 */

const LINE_BREAKING = /[\r\n\0]/;
const JS_LINE_SEPARATORS = /[\u2028\u2029]/g;
const SAFE_TOKEN = /^[A-Za-z0-9_-]+$/;

function escapeSeparators(json: string): string {
  return json.replace(JS_LINE_SEPARATORS, (c) => (c === '\u2028' ? '\\u2028' : '\\u2029'));
}

/** Makes a JSON text safe for one `data:` line. JSON.stringify never emits raw CR/LF/NUL; other producers might. */
export function singleLineJson(json: string): string {
  const oneLine = LINE_BREAKING.test(json) ? JSON.stringify(JSON.parse(json)) : json;
  return escapeSeparators(oneLine);
}

function assertToken(value: string, what: string): void {
  if (!SAFE_TOKEN.test(value)) throw new TypeError(`SSE ${what} must match ${SAFE_TOKEN.source}`);
}

/** A durable event: `id` (a cursor), `event`, one `data` line. */
export function durableFrame(id: string, event: string, json: string): string {
  assertToken(id, 'id');
  assertToken(event, 'event name');
  return `id: ${id}\nevent: ${event}\ndata: ${singleLineJson(json)}\n\n`;
}

/** A control event without id, so it never moves the client's resume point. */
export function controlFrame(event: 'heartbeat' | 'handoff' | 'reauthorize', data: object): string {
  return `event: ${event}\ndata: ${escapeSeparators(JSON.stringify(data))}\n\n`;
}

export const heartbeatFrame = (now: Date): string => controlFrame('heartbeat', { serverTime: now.toISOString() });
export const handoffFrame = (): string => controlFrame('handoff', { reason: 'stream_rotation' });
export const reauthorizeFrame = (reason: ReauthorizeReason): string => controlFrame('reauthorize', { reason });

/** Why a stream asks its client to re-authorize before reconnecting. */
export type ReauthorizeReason = 'access_revoked' | 'authorization_unavailable' | 'token_expiring';
