import { readRequestHead, type PlainGetHead } from './request-head.ts';

/** What the stream front does with the bytes a connection has sent so far. */
export type FirstRequest =
  /** A plain GET of a stream route, and nothing after it: served on the socket. */
  | { kind: 'serve'; head: PlainGetHead }
  /** Anything else: Node's server parses the same bytes and answers. */
  | { kind: 'hand-over' }
  /** Still a prefix of a head it would serve: wait for more (or answer 408 at the deadline). */
  | { kind: 'incomplete' };

/**
 * The stream front's whole decision on a connection's first bytes. A head followed by more bytes
 * (a pipelined request, a body) goes to Node, whose parser settles what follows it.
 */
export function readFirstRequest(bytes: Buffer, isStreamRoute: (method: string, target: string) => boolean, maxHeadBytes: number): FirstRequest {
  const reading = readRequestHead(bytes, maxHeadBytes);
  if (reading.kind === 'incomplete') return reading;
  if (reading.kind === 'other' || reading.head.length !== bytes.length) return { kind: 'hand-over' };
  return isStreamRoute('GET', reading.head.target) ? { kind: 'serve', head: reading.head } : { kind: 'hand-over' };
}
