import type { PublicRoute } from '@chat/http-kit';
import { z } from 'zod';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { FixtureInvalidError, parseFixture } from '../domain/fixture-store.ts';
import { revocationSchema } from '../domain/fixture.schema.ts';
import { mintToken, TOKEN_TYPES, TokenRequestInvalidError } from '../domain/token-minter.ts';
import { CoreRefusalError, invalid } from './http-errors.ts';
import { readJson } from './request-body.ts';

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
 * set faults, revoke tokens, and count service calls. The route table guards every `/dev/*` route by
 * its `Host` (see `dev-host-guard.ts`).
 */
export function devRoutes(ctx: DevCoreContext): PublicRoute[] {
  return [
    {
      method: 'POST',
      path: '/dev/tokens',
      access: 'public',
      handle: async ({ req }) => {
        const body = mintBodySchema.safeParse(await readJson(req));
        if (!body.success) throw invalid('token request', body.error);
        try {
          return { status: 200, body: { token: await mintToken(ctx, body.data) } };
        } catch (err) {
          throw err instanceof TokenRequestInvalidError ? new CoreRefusalError(400, 'request_invalid', err.message) : err;
        }
      },
    },
    { method: 'GET', path: '/dev/fixture', access: 'public', handle: () => ({ status: 200, body: ctx.store.current }) },
    {
      method: 'PUT',
      path: '/dev/fixture',
      access: 'public',
      handle: async ({ req }) => {
        try {
          ctx.store.replace(parseFixture(await readJson(req)));
        } catch (err) {
          throw err instanceof FixtureInvalidError ? new CoreRefusalError(400, 'fixture_invalid', 'fixture invalid', { issues: err.issues }) : err;
        }
        ctx.logger.info('fixture replaced');
        return { status: 200, body: ctx.store.current };
      },
    },
    { method: 'GET', path: '/dev/revocations', access: 'public', handle: () => ({ status: 200, body: { revocations: ctx.store.revocations } }) },
    // Revokes one token (`{ jti }`) or uninstalls an app (`{ clientId, subjectId? }`): the next
    // authorization of such a token is principal_invalid.
    {
      method: 'POST',
      path: '/dev/revocations',
      access: 'public',
      handle: async ({ req }) => {
        const body = revocationSchema.safeParse(await readJson(req));
        if (!body.success) throw invalid('revocation', body.error);
        ctx.store.revoke(body.data);
        ctx.logger.info({ revocation: body.data }, 'revocation recorded');
        return { status: 200, body: { revocations: ctx.store.revocations } };
      },
    },
    { method: 'GET', path: '/dev/calls', access: 'public', handle: () => ({ status: 200, body: ctx.calls.current }) },
    { method: 'GET', path: '/dev/faults', access: 'public', handle: () => ({ status: 200, body: ctx.faults.current }) },
    {
      method: 'POST',
      path: '/dev/faults',
      access: 'public',
      handle: async ({ req }) => {
        const body = faultBodySchema.safeParse(await readJson(req));
        if (!body.success) throw invalid('fault request', body.error);
        const settings = ctx.faults.set(body.data);
        ctx.logger.info({ faults: settings }, 'faults set');
        return { status: 200, body: settings };
      },
    },
  ];
}
