import type { CoreClient, TokenVerifier } from '@chat/authz-client';
import type { CursorCodec } from '@chat/contracts';
import type { Logger } from '@chat/observability';
import type { AppendRateLimit, Store } from '@chat/store';
import type { WebhookRegistrationPolicy } from './domain/register-webhook.ts';
import type { CommittedMessagePublisher } from './outbox/outbox.ts';
import type { ApiMetrics } from './metrics.ts';

/**
 * What the API's routes and use cases need, built once at start and handed down explicitly.
 */
export interface ApiDeps {
  store: Store;
  tokens: TokenVerifier;
  core: CoreClient;
  cursors: CursorCodec;
  logger: Logger;
  clock: () => Date;
  /** Sends a just-committed message to the backbone; the outbox relay covers whatever it misses. */
  publisher: CommittedMessagePublisher;
  /** The append rate limit, counted by the store. */
  rateLimit: AppendRateLimit;
  /** Told when a held rate unit could not be given back. */
  onReleaseFailure: (err: unknown) => void;
  metrics: ApiMetrics;
  limits: { bodyLimitBytes: number };
  /** What a webhook registration is checked against. */
  webhooks: WebhookRegistrationPolicy;
}
