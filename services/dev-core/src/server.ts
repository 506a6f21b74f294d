import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createLimitedServer, DEFAULT_HTTP_SERVER_LIMITS, type HttpServerLimits } from '@chat/http-server';
import type { Logger } from 'pino';
import { createDevCoreListener } from './app.ts';
import { DEFAULT_SERVICE_TOKEN } from './config.ts';
import type { DevCoreContext } from './domain/dev-core-context.ts';
import { CoreSessions } from './domain/core-sessions.ts';
import { FaultState, type FaultSettings } from './domain/fault-state.ts';
import { DEMO_FIXTURE_PATH, FixtureStore, loadFixtureFile, parseFixture } from './domain/fixture-store.ts';
import type { Fixture } from './domain/fixture.schema.ts';
import { MarketplaceOAuth } from './domain/marketplace-oauth.ts';
import { ServiceCallCounts } from './domain/service-call-counts.ts';
import { generateIssuerKeys, loadOrCreateIssuerKeys } from './domain/signing-keys.ts';
import { mintToken, type MintTokenRequest } from './domain/token-minter.ts';
import { createLogger } from './logger.ts';

export interface StartDevCoreOptions {
  /** Port to listen on; 0 picks a free one. */
  port: number;
  /** Interface to bind. @defaultValue '127.0.0.1' */
  host?: string;
  /** JSON fixture file; ignored when `fixture` is given. @defaultValue the bundled demo fixture */
  fixturePath?: string;
  /** Fixture value (validated like a file). */
  fixture?: unknown;
  /**
   * Folder of the signing keys: loaded from it, or made and written there, so tokens stay valid
   * across restarts (on the same port, which the issuers are named after).
   * @defaultValue none: new keys at every start
   */
  keysDir?: string;
  /** Base URL the issuers are named after. @defaultValue `http://127.0.0.1:<port>` */
  publicUrl?: string;
  /** Bearer token chat must present on `/internal/v1/*`. @defaultValue 'dev-core-service-token' */
  serviceToken?: string;
  /** @defaultValue a pino logger at level info */
  logger?: Logger;
  /** Header, request and keep-alive timeouts and the connection cap. @defaultValue DEFAULT_HTTP_SERVER_LIMITS */
  limits?: HttpServerLimits;
  /**
   * Clock (milliseconds) for core sessions and authorization-code expiry, so tests can pass time
   * without waiting. Token `iat`/`exp` always use the real clock: chat checks them.
   * @defaultValue Date.now
   */
  clock?: () => number;
}

export interface DevCoreHandle {
  /** Public base URL, without a trailing slash. */
  url: string;
  port: number;
  /** Mints a token like `POST /dev/tokens`. */
  mintToken(request: MintTokenRequest): Promise<string>;
  /** Validates and swaps the live fixture like `PUT /dev/fixture`. */
  replaceFixture(fixture: unknown): Fixture;
  /** Sets the fault like `POST /dev/faults`. */
  setFaults(settings: { authorization: FaultSettings['authorization']; latencyMs?: number }): FaultSettings;
  /** Makes `redirectUri` the registered callback of app `clientId`; false when no such app is registered. */
  registerAppCallback(clientId: string, redirectUri: string): boolean;
  close(): Promise<void>;
}

/** Starts one dev-core: its signing keys (kept in `keysDir`, or fresh), the chosen fixture, and an HTTP listener. */
export async function startDevCore(options: StartDevCoreOptions): Promise<DevCoreHandle> {
  const fixture =
    options.fixture !== undefined
      ? parseFixture(options.fixture)
      : await loadFixtureFile(options.fixturePath ?? DEMO_FIXTURE_PATH);
  const logger = options.logger ?? createLogger();
  let publicUrl = options.publicUrl?.replace(/\/+$/, '') ?? '';
  const store = new FixtureStore(fixture);
  const keys = options.keysDir === undefined ? await generateIssuerKeys() : await loadOrCreateIssuerKeys(options.keysDir);
  const now = options.clock ?? Date.now;
  const ctx: DevCoreContext = {
    store,
    keys,
    faults: new FaultState(),
    calls: new ServiceCallCounts(),
    publicUrl: () => publicUrl,
    serviceToken: options.serviceToken ?? DEFAULT_SERVICE_TOKEN,
    logger,
    now,
    sessions: new CoreSessions(now),
    oauth: new MarketplaceOAuth({ store, keys, publicUrl: () => publicUrl, now }),
  };
  const server = createLimitedServer(createDevCoreListener(ctx), options.limits ?? DEFAULT_HTTP_SERVER_LIMITS).listen(options.port, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  if (publicUrl === '') publicUrl = `http://127.0.0.1:${port}`;
  logger.info({ url: publicUrl, repositories: fixture.repositories.length }, 'dev-core listening');

  return {
    url: publicUrl,
    port,
    mintToken: (request) => mintToken(ctx, request),
    replaceFixture: (next) => {
      const parsed = parseFixture(next);
      ctx.store.replace(parsed);
      return parsed;
    },
    setFaults: (settings) => ctx.faults.set(settings),
    registerAppCallback: (clientId, redirectUri) => ctx.store.registerCallback(clientId, redirectUri),
    close: async () => {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}
