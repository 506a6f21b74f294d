import { ChatClient } from '@chat/client';
import { chatBaseUrl, type ViewerConfig } from './config.ts';
import type { Session } from './session.ts';

/** Below this, a token is replaced through a new sign-in rather than used again. */
const REFRESH_BEFORE_EXPIRY_MS = 2 * 60_000;

/**
 * The SDK client of a signed-in tab. A forced refresh (after a 401 or a `reauthorize` event) reuses
 * the token while it is far from its end: the service re-evaluates its authority live on the next
 * request, and a refusal ends the session there. A token near its end is replaced by going through
 * the sign-in again (`reauthorize`), which returns to the same room and position.
 */
export function createChatClient(config: ViewerConfig, session: Session, reauthorize: () => Promise<never>): ChatClient {
  return new ChatClient({
    baseUrl: chatBaseUrl(config),
    token: ({ forceRefresh }) => (forceRefresh && session.expiresAt - Date.now() < REFRESH_BEFORE_EXPIRY_MS ? reauthorize() : session.accessToken),
    // Short waits are retried quietly; a longer Retry-After is shown to the person as a countdown.
    retry: { maxRetryAfterMs: 2_000 },
  });
}
