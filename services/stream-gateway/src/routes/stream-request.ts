import type { ScopeAuthorization, VerifiedPrincipal } from '@chat/authz-client';
import type { RequestScope } from '@chat/http-kit';

/**
 * What a stream handler reads of its request once access is settled: the same whether express or
 * the gateway's own request listener (see `stream-listener.ts`) parsed it.
 */
export interface StreamRequest {
  requestId: string;
  principal: VerifiedPrincipal;
  scope: RequestScope;
  access: ScopeAuthorization;
  /** The raw `Last-Event-ID` header. */
  lastEventId: unknown;
  /** The raw `cursor` query parameter (a string, an array when repeated, or absent). */
  cursorQuery: unknown;
  /** The raw `Accept` header. */
  accept: string | undefined;
}
