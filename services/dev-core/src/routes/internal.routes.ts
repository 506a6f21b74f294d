import { createHash, timingSafeEqual } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { decideAuthorization } from '../domain/authorization.ts';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { resolveMentions } from '../domain/mention-resolution.ts';
import { resourceTokenOfAuthor } from '../domain/resource-token.ts';
import { sendError } from './http-errors.ts';

const idSchema = z.string().min(1).max(128);

export const authorizeBodySchema = z.object({
  principal: z.object({
    kind: z.enum(['user', 'bot']),
    id: idSchema,
    credentialId: idSchema.optional(),
    tokenId: idSchema.optional(),
    clientId: idSchema.optional(),
  }),
  repositoryId: idSchema,
  branchId: idSchema.optional(),
  action: z.enum(['read', 'write']),
});

/** At most this many decisions per batch call. */
export const MAX_AUTHORIZE_BATCH = 100;

const authorizeBatchBodySchema = z.object({
  requests: z
    .array(authorizeBodySchema.extend({ requestId: z.string().max(128).optional() }))
    .min(1)
    .max(MAX_AUTHORIZE_BATCH),
});

/** A status and a JSON body: what both the express routes and the plain listener send. */
export interface InternalAnswer {
  status: number;
  body: unknown;
}

const invalid = (what: string, issues: unknown): InternalAnswer => ({
  status: 400,
  body: { error: { code: 'request_invalid', message: `${what} invalid`, issues } },
});

/** `POST /internal/v1/authorize`: one live decision. */
export function answerAuthorize(ctx: DevCoreContext, raw: unknown): InternalAnswer {
  const body = authorizeBodySchema.safeParse(raw);
  if (!body.success) return invalid('authorization request', body.error.issues);
  return { status: 200, body: decideAuthorization(ctx.store, body.data) };
}

/**
 * `POST /internal/v1/authorize/batch`: several decisions in one call, each made exactly as the single
 * endpoint makes it, in request order.
 */
export function answerAuthorizeBatch(ctx: DevCoreContext, raw: unknown): InternalAnswer {
  const body = authorizeBatchBodySchema.safeParse(raw);
  if (!body.success) return invalid('authorization batch', body.error.issues);
  return { status: 200, body: { decisions: body.data.requests.map(({ requestId: _requestId, ...request }) => decideAuthorization(ctx.store, request)) } };
}

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

/** Plays the configured fault: `unavailable` answers 503, `slow` answers late. */
function applyFault(ctx: DevCoreContext): RequestHandler {
  return async (_req, res, next) => {
    const fault = ctx.faults.current;
    if (fault.authorization === 'unavailable') {
      sendError(res, 503, 'unavailable', 'authorization is unavailable');
      return;
    }
    if (fault.authorization === 'slow') await delay(fault.latencyMs);
    next();
  };
}

/** Whether an `Authorization` header carries chat's service token (compared in constant time). */
export function serviceTokenMatcher(ctx: DevCoreContext): (header: string | undefined) => boolean {
  const expected = digest(`Bearer ${ctx.serviceToken}`);
  return (header) => header !== undefined && timingSafeEqual(digest(header), expected);
}

/** Only chat, holding the service token, may call core's service API. */
function requireServiceToken(ctx: DevCoreContext): RequestHandler {
  const matches = serviceTokenMatcher(ctx);
  return (req, res, next) => {
    if (!matches(req.get('authorization'))) {
      sendError(res, 401, 'service_unauthenticated', 'service token missing or wrong');
      return;
    }
    next();
  };
}

/** Core's service API for chat: live authorization decisions and mention resolution. */
export function internalRoutes(ctx: DevCoreContext): Router {
  const router = Router();
  router.use('/internal', (req, _res, next) => {
    ctx.calls.record(req.originalUrl);
    next();
  }, applyFault(ctx), requireServiceToken(ctx));

  router.post('/internal/v1/authorize', (req, res) => {
    const answer = answerAuthorize(ctx, req.body);
    res.status(answer.status).json(answer.body);
  });

  router.post('/internal/v1/authorize/batch', (req, res) => {
    const answer = answerAuthorizeBatch(ctx, req.body);
    res.status(answer.status).json(answer.body);
  });

  router.post('/internal/v1/mentions/resolve', async (req, res) => {
    const body = mentionsBodySchema.safeParse(req.body);
    if (!body.success) {
      sendError(res, 400, 'request_invalid', 'mention resolution request invalid', { issues: body.error.issues });
      return;
    }
    const resourceHeader = req.get('x-core-resource-authorization');
    // One refusal for every reason (forged, expired, another person's token), so it tells a caller nothing.
    if (resourceHeader !== undefined && !(await resourceTokenOfAuthor(ctx, ctx.store, resourceHeader, body.data.author))) {
      sendError(res, 401, 'resource_token_rejected', 'core resource token rejected');
      return;
    }
    res.json({ targets: resolveMentions(ctx.store, body.data) });
  });
  return router;
}
