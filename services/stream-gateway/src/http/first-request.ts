import { matchPlainRoute, type FastRoute } from '@chat/http-kit';
import { readRequestHead, type PlainGetHead } from './request-head.ts';

/** What the stream front does with the bytes a connection has sent so far. */
export type FirstRequest =
  /** A plain GET of one of its routes, and nothing after it: served on the socket. */
  | { kind: 'serve'; head: PlainGetHead; match: { route: FastRoute; params: Record<string, string>; query: string } }
  /** Anything else: Node's server parses the same bytes and answers. */
  | { kind: 'hand-over' }
  /** Still a prefix of a head it would serve: wait for more (or answer 408 at the deadline). */
  | { kind: 'incomplete' };

/**
 * The stream front's whole decision on a connection's first bytes. A head followed by more bytes
 * (a pipelined request, a body) goes to Node, whose parser settles what follows it.
 */
export function readFirstRequest(bytes: Buffer, routes: readonly FastRoute[], maxHeadBytes: number): FirstRequest {
  const reading = readRequestHead(bytes, maxHeadBytes);
  if (reading.kind === 'incomplete') return reading;
  if (reading.kind === 'other' || reading.head.length !== bytes.length) return { kind: 'hand-over' };
  const match = matchPlainRoute(reading.head.target, routes);
  return match ? { kind: 'serve', head: reading.head, match } : { kind: 'hand-over' };
}
