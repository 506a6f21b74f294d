import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import type { PublicRoute, RouteAnswer } from '@chat/http-kit';
import { z } from 'zod';
import { decideAuthorization } from '../domain/authorization.ts';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { resolveMentions } from '../domain/mention-resolution.ts';
import { discoverRepositories } from '../domain/principal-repositories.ts';
import { resourceTokenOfAuthor } from '../domain/resource-token.ts';
import type { ServiceEndpointName } from '../domain/service-call-counts.ts';
import { CoreRefusalError, invalid } from './http-errors.ts';
import { readJson } from './request-body.ts';

const idSchema = z.string().min(1).max(128);

const principalSchema = z.object({
  kind: z.enum(['user', 'bot']),
  id: idSchema,
  credentialId: idSchema.optional(),
  tokenId: idSchema.optional(),
  clientId: idSchema.optional(),
});

const authorizeBodySchema = z.object({
  principal: principalSchema,
  repositoryId: idSchema,
  branchId: idSchema.optional(),
  action: z.enum(['read', 'write']),
});

/** At most this many decisions per batch call. */
const MAX_AUTHORIZE_BATCH = 100;

const authorizeBatchBodySchema = z.object({
  requests: z
    .array(authorizeBodySchema.extend({ requestId: z.string().max(128).optional() }))
    .min(1)
    .max(MAX_AUTHORIZE_BATCH),
});

/** Discovery answers `read` only: where a principal may write is asked scope by scope. */
const discoveryBodySchema = z.object({ principal: principalSchema, action: z.literal('read') });

const mentionsBodySchema = z.object({
  repositoryId: idSchema,
  branchId: idSchema.optional(),
  targets: z.array(z.object({ kind: z.enum(['human', 'bot']), id: idSchema })).max(100),
  /** The message's sender; a resource token must be this user's own. */
  author: z.object({ kind: z.enum(['user', 'bot']), id: idSchema }).optional(),
});

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * A service endpoint's handler: the call is counted under `name` (`GET /dev/calls`), whatever its
 * answer; then the configured fault plays (`unavailable` answers 503, `slow` answers late); then only
 * chat, holding the service token (compared in constant time), gets further; then the JSON body is read
 * and `answer` decides.
 */
function serviceEndpoint(ctx: DevCoreContext) {
  const expected = digest(`Bearer ${ctx.serviceToken}`);
  return (name: ServiceEndpointName, answer: (body: unknown, req: IncomingMessage) => RouteAnswer | Promise<RouteAnswer>): PublicRoute['handle'] =>
    async ({ req }) => {
      ctx.calls.record(name);
      const fault = ctx.faults.current;
      if (fault.authorization === 'unavailable') throw new CoreRefusalError(503, 'unavailable', 'authorization is unavailable');
      if (fault.authorization === 'slow') await delay(fault.latencyMs);
      const header = req.headers.authorization;
      if (header === undefined || !timingSafeEqual(digest(header), expected)) {
        throw new CoreRefusalError(401, 'service_unauthenticated', 'service token missing or wrong');
      }
      return answer(await readJson(req), req);
    };
}

/**
 * Core's service API for chat: live authorization decisions, one at a time or in a batch, discovery
 * of the repositories a principal may read, and mention resolution. Chat asks `authorize` on every request it serves, so it comes first in the table.
 */
export function internalRoutes(ctx: DevCoreContext): PublicRoute[] {
  const endpoint = serviceEndpoint(ctx);
  return [
    {
      method: 'POST',
      path: '/internal/v1/authorize',
      access: 'public',
      handle: endpoint('authorize', (raw) => {
        const body = authorizeBodySchema.safeParse(raw);
        if (!body.success) throw invalid('authorization request', body.error);
        return { status: 200, body: decideAuthorization(ctx.store, body.data) };
      }),
    },
    // Several decisions in one call, each made exactly as the single endpoint makes it, in request order.
    {
      method: 'POST',
      path: '/internal/v1/authorize/batch',
      access: 'public',
      handle: endpoint('authorizeBatch', (raw) => {
        const body = authorizeBatchBodySchema.safeParse(raw);
        if (!body.success) throw invalid('authorization batch', body.error);
        return { status: 200, body: { decisions: body.data.requests.map(({ requestId: _requestId, ...request }) => decideAuthorization(ctx.store, request)) } };
      }),
    },
    // Where a principal may read, decided as authorize decides a read on each repository.
    {
      method: 'POST',
      path: '/internal/v1/principals/repositories',
      access: 'public',
      handle: endpoint('listRepositories', (raw) => {
        const body = discoveryBodySchema.safeParse(raw);
        if (!body.success) throw invalid('repository discovery request', body.error);
        return { status: 200, body: discoverRepositories(ctx.store, body.data.principal) };
      }),
    },
    {
      method: 'POST',
      path: '/internal/v1/mentions/resolve',
      access: 'public',
      handle: endpoint('resolveMentions', async (raw, req) => {
        const body = mentionsBodySchema.safeParse(raw);
        if (!body.success) throw invalid('mention resolution request', body.error);
        // Node joins a repeated header of this name into one value.
        const resourceHeader = req.headers['x-core-resource-authorization'] as string | undefined;
        // One refusal for every reason (forged, expired, another person's token), so it tells a caller nothing.
        if (resourceHeader !== undefined && !(await resourceTokenOfAuthor(ctx, ctx.store, resourceHeader, body.data.author))) {
          throw new CoreRefusalError(401, 'resource_token_rejected', 'core resource token rejected');
        }
        return { status: 200, body: { targets: resolveMentions(ctx.store, body.data) } };
      }),
    },
  ];
}
