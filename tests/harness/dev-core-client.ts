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
