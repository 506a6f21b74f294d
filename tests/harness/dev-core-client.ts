import { createHash, randomBytes } from 'node:crypto';
import { recordMintedToken } from './child-service.ts';

/** What `POST /dev/tokens` mints (architecture brief, "The core service and dev-core"). */
export type TokenType = 'human' | 'bot' | 'core_resource' | 'id_token' | 'app';

export interface MintRequest {
  type: TokenType;
  subjectId: string;
  credentialId?: string;
  expiresInSeconds?: number;
  /** The marketplace app of a human, core resource or app token (dev-core's demo app when absent). */
  clientId?: string;
}

/** A revocation in dev-core: one token by its `jti`, or an app uninstalled for one user or everyone. */
export type Revocation = { jti: string } | { clientId: string; subjectId?: string };

export type FaultMode = 'ok' | 'unavailable' | 'slow';

/** Calls received per service endpoint of dev-core. */
export interface ServiceCalls {
  authorize: number;
  authorizeBatch: number;
  resolveMentions: number;
}

/** A registered marketplace app in dev-core's fixture (`apps`). */
export interface FixtureApp {
  clientId: string;
  redirectUri: string;
  scopes: string[];
}

/** A human's installation of an app in dev-core's fixture (`installations`). */
export interface FixtureInstallation {
  clientId: string;
  userId: string;
  scopes: string[];
  state: 'active' | 'uninstalled';
}

/** One answer of dev-core's OAuth handoff, as it came: status, headers, parsed JSON body if any. */
export interface HandoffAnswer {
  status: number;
  headers: Headers;
  body: any;
}

/** A PKCE pair (RFC 7636): a fresh 43-character verifier and its S256 challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

async function handoffAnswer(response: Response): Promise<HandoffAnswer> {
  const text = await response.text();
  const json = /^application\/json/.test(response.headers.get('content-type') ?? '');
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : undefined };
}

/** dev-core's test surface over HTTP: tokens, the live fixture, faults. */
export class DevCoreClient {
  constructor(readonly url: string) {}

  async mintToken(request: MintRequest): Promise<string> {
    const body = (await this.call('POST', '/dev/tokens', request)) as { token: string };
    // Every minted token is a secret the services must never log (checked at the end of the run).
    recordMintedToken(body.token);
    return body.token;
  }

  async getFixture(): Promise<unknown> {
    return this.call('GET', '/dev/fixture');
  }

  async putFixture(fixture: unknown): Promise<void> {
    await this.call('PUT', '/dev/fixture', fixture);
  }

  /** Revokes a token or uninstalls an app (`POST /dev/revocations`); core refuses it from its next call. */
  async revoke(revocation: Revocation): Promise<void> {
    await this.call('POST', '/dev/revocations', revocation);
  }

  /** Calls dev-core's service endpoints received since it started (`GET /dev/calls`). */
  async calls(): Promise<ServiceCalls> {
    return (await this.call('GET', '/dev/calls')) as ServiceCalls;
  }

  async setFaults(authorization: FaultMode, latencyMs?: number): Promise<void> {
    await this.call('POST', '/dev/faults', latencyMs === undefined ? { authorization } : { authorization, latencyMs });
  }

  /**
   * Signs `userId` in to core's web app (`POST /dev/session`) and returns the `Cookie` header value
   * a browser would send to core's `/oauth/*` pages.
   */
  async signIn(userId: string): Promise<string> {
    const { session } = (await this.call('POST', '/dev/session', { userId })) as { session: string };
    recordMintedToken(session);
    return `core_session=${session}`;
  }

  /**
   * Opens the core web app's `/oauth/authorize` bridge as a browser holding `cookie` would, without
   * following the redirect: a 303 names the app's callback with `code` and `state` in `Location`.
   */
  async openAuthorizeBridge(query: Record<string, string>, cookie: string | undefined): Promise<HandoffAnswer> {
    const url = `${this.url}/oauth/authorize?${new URLSearchParams(query).toString()}`;
    return handoffAnswer(await fetch(url, { redirect: 'manual', headers: cookie === undefined ? {} : { cookie } }));
  }

  /** `POST /api/marketplace/oauth/token`, form-encoded as an OAuth client sends it; tokens it answers are recorded as secrets. */
  async exchangeCode(body: Record<string, string>, origin?: string): Promise<HandoffAnswer> {
    const answer = await handoffAnswer(
      await fetch(`${this.url}/api/marketplace/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(origin === undefined ? {} : { origin }) },
        body: new URLSearchParams(body).toString(),
      }),
    );
    for (const key of ['access_token', 'core_access_token']) if (typeof answer.body?.[key] === 'string') recordMintedToken(answer.body[key]);
    return answer;
  }

  /** `POST /api/repositories/{id}/commits/lookup` with a core token. */
  async lookupCommits(repositoryId: string, coreToken: string, candidates: string[]): Promise<HandoffAnswer> {
    return handoffAnswer(
      await fetch(`${this.url}/api/repositories/${repositoryId}/commits/lookup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${coreToken}` },
        body: JSON.stringify({ candidates }),
      }),
    );
  }

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`dev-core ${method} ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as unknown;
  }
}
