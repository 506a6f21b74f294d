import { AppError } from '@chat/contracts';
import { traceCoreCall, type CoreCallSpan } from '@chat/tracing';
import { z } from 'zod';
import { AuthorizeCoalescer, type AuthorizeCall } from './authorize-coalescer.ts';
import { coreEndpoints } from './core-endpoints.ts';
import { createCoreTransport, type CoreTransport } from './core-transport.ts';
import { PrincipalShares } from './principal-shares.ts';
import {
  authorizationDecisionSchema,
  mentionResolutionSchema,
  repositoryListingSchema,
  type AuthorizationDecision,
  type AuthorizationRequest,
  type MentionResolution,
  type MentionResolutionRequest,
  type RepositoryListing,
  type RepositoryListingRequest,
} from './core-contract.schema.ts';

interface CoreClientOptions {
  /** Core's base URL. */
  coreUrl: string;
  /** Bearer token chat presents to core's service API. */
  serviceToken: string;
  /** Time allowed for a whole call, body included, before answering 503. @defaultValue 2000 */
  timeoutMs?: number;
  /** The HTTP leg. @defaultValue a keep-alive pool on undici (createCoreTransport) */
  transport?: CoreTransport;
  /**
   * Authorize calls to core in flight at once (a call unanswered after 25 ms no longer counts);
   * authorizations beyond them wait and then share one call to the batch endpoint (see
   * AuthorizeCoalescer). @defaultValue 1
   */
  authorizeConcurrency?: number;
  /**
   * Authorizations one principal (by kind and ID) may have waiting for core or in a call at once;
   * past it, its next one is refused at once with 503 AUTHORIZATION_UNAVAILABLE and Retry-After, so
   * one flooding token cannot fill the queue all principals share (see PrincipalShares).
   * @defaultValue 64
   */
  maxAuthorizationsPerPrincipal?: number;
  /** Told the duration and outcome of every call (for latency and failure metrics). */
  observe?: (operation: CoreOperation, seconds: number, outcome: 'ok' | 'error') => void;
}

export type CoreOperation = 'authorize' | 'resolveMentions' | 'listRepositories' | 'ping';

export interface CallOptions {
  /** Passed to core as `X-Request-Id` so both sides' logs line up. */
  requestId?: string;
}

export interface CoreClient {
  /** Asks core for a live decision. Throws AppError AUTHORIZATION_UNAVAILABLE when core cannot answer. */
  authorize(input: AuthorizationRequest, options?: CallOptions): Promise<AuthorizationDecision>;
  /**
   * Asks core which mention targets exist and may read the scope. Throws CORE_RESOURCE_TOKEN_REJECTED
   * when core refuses the resource token (invalid, expired, revoked, or another person's than the
   * author's: core answers them alike), AUTHORIZATION_UNAVAILABLE when core cannot answer.
   */
  resolveMentions(input: MentionResolutionRequest, options?: CallOptions): Promise<MentionResolution>;
  /**
   * Asks core, live, for the repositories the principal may read (its discovery call), or whether
   * its token or credential is refused (`principal_invalid`). Throws AUTHORIZATION_UNAVAILABLE when
   * core cannot answer.
   */
  listRepositories(input: RepositoryListingRequest, options?: CallOptions): Promise<RepositoryListing>;
  /** Readiness probe: core's key set answers. Throws AUTHORIZATION_UNAVAILABLE otherwise. */
  ping(): Promise<void>;
  /**
   * The most authorizations that waited for a call to core at once since the previous reading, and
   * the bound past which one is refused at once with 503 AUTHORIZATION_UNAVAILABLE (see
   * AuthorizeCoalescer's `maxQueued`): how close a burst of requests came to it.
   */
  takeAuthorizationQueuePeak(): { peak: number; bound: number };
}

/** Answers larger than this are not something core sends; they are treated as garbage. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * A discovery answer names every repository a principal may read: about 70 bytes each, so 10,000
 * repositories (a bot installed across a large forge) take some 700 KB; this leaves room for several
 * times that.
 */
const MAX_LISTING_RESPONSE_BYTES = 8 * 1024 * 1024;

/** The batch answer's frame; each decision is validated on its own, so a bad one fails only its caller. */
const authorizeBatchAnswerSchema = z.object({ decisions: z.array(z.unknown()) });

function unavailable(cause: unknown): AppError {
  return new AppError('AUTHORIZATION_UNAVAILABLE', 'Authorization is unavailable.', { cause });
}

interface CoreResponse {
  status: number;
  body: unknown;
}

/**
 * The client of core's service API. Every failure to get a well-formed answer in time (timeout,
 * network error, 5xx, an unexpected status, a body that fails validation) is AUTHORIZATION_UNAVAILABLE,
 * so callers fail closed with 503 and never guess.
 */
export function createCoreClient(options: CoreClientOptions): CoreClient {
  const endpoints = coreEndpoints(options.coreUrl);
  const timeoutMs = options.timeoutMs ?? 2000;
  const transport = options.transport ?? createCoreTransport();
  const serviceAuthorization = `Bearer ${options.serviceToken}`;

  async function post(url: URL, body: unknown, headers: Record<string, string>, maxResponseBytes = MAX_RESPONSE_BYTES): Promise<CoreResponse> {
    try {
      const response = await transport.send(url, {
        method: 'POST',
        headers: {
          authorization: serviceAuthorization,
          'content-type': 'application/json',
          accept: 'application/json',
          ...headers,
        },
        body: JSON.stringify(body),
        timeoutMs,
        maxResponseBytes,
      });
      const { text } = response;
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, body: parsed };
    } catch (err) {
      throw unavailable(err);
    }
  }

  function validated<T>(schema: z.ZodType<T>, response: CoreResponse, what: string): T {
    if (response.status !== 200) throw unavailable(new Error(`core answered ${what} with status ${response.status}`));
    const result = schema.safeParse(response.body);
    if (!result.success) throw unavailable(new Error(`core's ${what} answer failed validation`));
    return result.data;
  }

  /** `X-Request-Id` for core's logs, and the call's `traceparent` (tracing on) for core's trace. */
  function requestHeaders(callOptions: CallOptions | undefined, span: CoreCallSpan | undefined): Record<string, string> {
    const headers: Record<string, string> = callOptions?.requestId === undefined ? {} : { 'x-request-id': callOptions.requestId };
    if (span !== undefined) headers.traceparent = span.traceparent;
    return headers;
  }

  async function observed<T>(operation: CoreOperation, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      const result = await call();
      options.observe?.(operation, (performance.now() - started) / 1000, 'ok');
      return result;
    } catch (err) {
      options.observe?.(operation, (performance.now() - started) / 1000, 'error');
      throw err;
    }
  }

  async function sendAuthorizations(calls: AuthorizeCall[]): Promise<Array<AuthorizationDecision | Error>> {
    if (calls.length === 1) {
      const [{ input, requestId, span }] = calls as [AuthorizeCall];
      const response = await post(endpoints.authorize, input, requestHeaders({ ...(requestId === undefined ? {} : { requestId }) }, span));
      return [validated(authorizationDecisionSchema, response, 'authorize')];
    }
    const requests = calls.map(({ input, requestId }) => (requestId === undefined ? input : { ...input, requestId }));
    // One HTTP call, one traceparent: the first traced authorization's. Each traced authorization's
    // span tells how many the call carried.
    let carried: CoreCallSpan | undefined;
    for (const { span } of calls) {
      span?.sharedBy(calls.length);
      carried ??= span;
    }
    const response = await post(endpoints.authorizeBatch, { requests }, requestHeaders(undefined, carried));
    const { decisions } = validated(authorizeBatchAnswerSchema, response, 'authorize batch');
    if (decisions.length !== calls.length) throw unavailable(new Error(`core answered ${decisions.length} of ${calls.length} authorizations`));
    return decisions.map((decision) => {
      const parsed = authorizationDecisionSchema.safeParse(decision);
      return parsed.success ? parsed.data : unavailable(new Error("a decision in core's authorize batch answer failed validation"));
    });
  }
  // The deadline covers an authorization's wait in the queue and its call together, so a request
  // that queued is answered within the same timeout as one that went out at once.
  const authorizations = new AuthorizeCoalescer(sendAuthorizations, {
    deadlineMs: timeoutMs,
    ...(options.authorizeConcurrency === undefined ? {} : { maxConcurrent: options.authorizeConcurrency }),
  });

  const shares = new PrincipalShares(options.maxAuthorizationsPerPrincipal ?? 64);

  /** Core's operations, each told its span (undefined while tracing is off). */
  const client = {
    authorize: (input: AuthorizationRequest, callOptions: CallOptions | undefined, span: CoreCallSpan | undefined) =>
      shares.run(`${input.principal.kind}:${input.principal.id}`, () =>
        authorizations.submit({ input, span, ...(callOptions?.requestId === undefined ? {} : { requestId: callOptions.requestId }) }),
      ),

    async resolveMentions(input: MentionResolutionRequest, callOptions: CallOptions | undefined, span: CoreCallSpan | undefined): Promise<MentionResolution> {
      const { coreResourceToken, ...body } = input;
      const headers = requestHeaders(callOptions, span);
      if (coreResourceToken !== undefined) headers['x-core-resource-authorization'] = `Bearer ${coreResourceToken}`;
      const response = await post(endpoints.resolveMentions, body, headers);
      const errorCode = (response.body as { error?: { code?: unknown } } | undefined)?.error?.code;
      // 401 is the resource token's refusal, unless core says it refused chat's own service token.
      if (response.status === 401 && errorCode !== 'service_unauthenticated') {
        throw new AppError('CORE_RESOURCE_TOKEN_REJECTED', 'The core resource token was rejected.');
      }
      const resolution = validated(mentionResolutionSchema, response, 'mention resolution');
      const answered = new Set(resolution.targets.map((t) => `${t.kind}:${t.id}`));
      if (!input.targets.every((t) => answered.has(`${t.kind}:${t.id}`))) {
        throw unavailable(new Error('core left mention targets unanswered'));
      }
      return resolution;
    },

    // Shares the principal's bound with its authorizations: one token cannot flood core with either.
    listRepositories: (input: RepositoryListingRequest, callOptions: CallOptions | undefined, span: CoreCallSpan | undefined) =>
      shares.run(`${input.principal.kind}:${input.principal.id}`, async (): Promise<RepositoryListing> => {
        const response = await post(endpoints.principalRepositories, input, requestHeaders(callOptions, span), MAX_LISTING_RESPONSE_BYTES);
        return validated(repositoryListingSchema, response, 'repository listing');
      }),

    async ping(): Promise<void> {
      try {
        const response = await transport.send(endpoints.marketplaceJwks, { method: 'GET', timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES });
        if (response.status !== 200) throw new Error(`core key set answered ${response.status}`);
      } catch (err) {
        throw unavailable(err);
      }
    },
  };
  // The readiness probe's key-set fetch stays untraced: it serves no request.
  const core = new URL(options.coreUrl);
  return {
    authorize: (input, callOptions) => observed('authorize', () => traceCoreCall('authorize', core, (span) => client.authorize(input, callOptions, span))),
    resolveMentions: (input, callOptions) => observed('resolveMentions', () => traceCoreCall('resolveMentions', core, (span) => client.resolveMentions(input, callOptions, span))),
    listRepositories: (input, callOptions) => observed('listRepositories', () => traceCoreCall('listRepositories', core, (span) => client.listRepositories(input, callOptions, span))),
    ping: () => observed('ping', () => client.ping()),
    takeAuthorizationQueuePeak: () => ({ peak: authorizations.takePeakQueued(), bound: authorizations.queueBound }),
  };
}
