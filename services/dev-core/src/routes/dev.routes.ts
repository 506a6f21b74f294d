import { Router } from 'express';
import { z } from 'zod';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { FixtureInvalidError, parseFixture } from '../domain/fixture-store.ts';
import { revocationSchema } from '../domain/fixture.schema.ts';
import { mintToken, TOKEN_TYPES, TokenRequestInvalidError } from '../domain/token-minter.ts';
import { sendError } from './http-errors.ts';

const ONE_YEAR_SECONDS = 365 * 24 * 3600;

const mintBodySchema = z.object({
  type: z.enum(TOKEN_TYPES),
  subjectId: z.string().min(1).max(128),
  credentialId: z.string().min(1).max(128).optional(),
  expiresInSeconds: z.number().int().min(-ONE_YEAR_SECONDS).max(ONE_YEAR_SECONDS).optional(),
  clientId: z.string().min(1).max(128).optional(),
});

const faultBodySchema = z.object({
  authorization: z.enum(['ok', 'unavailable', 'slow']),
  latencyMs: z.number().int().min(0).max(600_000).optional(),
});

/**
 * The test surface of docs/core-contract.md ("dev-core"): mint tokens, read and replace the fixture,
 * set faults, revoke tokens, and count service calls.
 */
export function devRoutes(ctx: DevCoreContext): Router {
  const router = Router();

  router.post('/dev/tokens', async (req, res) => {
    const body = mintBodySchema.safeParse(req.body);
    if (!body.success) {
      sendError(res, 400, 'request_invalid', 'token request invalid', { issues: body.error.issues });
      return;
    }
    try {
      res.json({ token: await mintToken(ctx, body.data) });
    } catch (err) {
      if (!(err instanceof TokenRequestInvalidError)) throw err;
      sendError(res, 400, 'request_invalid', err.message);
    }
  });

  router.get('/dev/fixture', (_req, res) => {
    res.json(ctx.store.current);
  });

  router.put('/dev/fixture', (req, res) => {
    try {
      ctx.store.replace(parseFixture(req.body));
    } catch (err) {
      if (!(err instanceof FixtureInvalidError)) throw err;
      sendError(res, 400, 'fixture_invalid', 'fixture invalid', { issues: err.issues });
      return;
    }
    ctx.logger.info('fixture replaced');
    res.json(ctx.store.current);
  });

  router.get('/dev/revocations', (_req, res) => {
    res.json({ revocations: ctx.store.revocations });
  });

  // Revokes one token (`{ jti }`) or uninstalls an app (`{ clientId, subjectId? }`): the next
  // authorization of such a token is principal_invalid.
  router.post('/dev/revocations', (req, res) => {
    const body = revocationSchema.safeParse(req.body);
    if (!body.success) {
      sendError(res, 400, 'request_invalid', 'revocation invalid', { issues: body.error.issues });
      return;
    }
    ctx.store.revoke(body.data);
    ctx.logger.info({ revocation: body.data }, 'revocation recorded');
    res.json({ revocations: ctx.store.revocations });
  });

  router.get('/dev/calls', (_req, res) => {
    res.json(ctx.calls.current);
  });

  router.get('/dev/faults', (_req, res) => {
    res.json(ctx.faults.current);
  });

  router.post('/dev/faults', (req, res) => {
    const body = faultBodySchema.safeParse(req.body);
    if (!body.success) {
      sendError(res, 400, 'request_invalid', 'fault request invalid', { issues: body.error.issues });
      return;
    }
    const settings = ctx.faults.set(body.data);
    ctx.logger.info({ faults: settings }, 'faults set');
    res.json(settings);
  });
  return router;
}
