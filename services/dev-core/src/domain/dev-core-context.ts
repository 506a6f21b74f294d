import type { Logger } from 'pino';
import type { CoreSessions } from './core-sessions.ts';
import type { FaultState } from './fault-state.ts';
import type { FixtureStore } from './fixture-store.ts';
import type { MarketplaceOAuth } from './marketplace-oauth.ts';
import type { ServiceCallCounts } from './service-call-counts.ts';
import type { IssuerKeys } from './signing-keys.ts';

/** Everything the routes of one dev-core instance share, wired by hand in `server.ts`. */
export interface DevCoreContext {
  store: FixtureStore;
  keys: IssuerKeys;
  faults: FaultState;
  /** Calls received per service endpoint (`GET /dev/calls`). */
  calls: ServiceCallCounts;
  /** Base URL the issuers are named after; known only once the listener has its port. */
  publicUrl: () => string;
  /** Bearer token chat presents on `/internal/v1/*`. */
  serviceToken: string;
  logger: Logger;
  /** Wall clock in milliseconds for sessions and authorization codes; tests inject their own. */
  now: () => number;
  /** Core web sessions of the development sign-in. */
  sessions: CoreSessions;
  /** Authorization codes of the marketplace OAuth handoff. */
  oauth: MarketplaceOAuth;
}
