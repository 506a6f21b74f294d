import { Router } from 'express';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { ISSUERS, jwksOf, type IssuerName } from '../domain/signing-keys.ts';
import { sendError } from './http-errors.ts';

function isIssuerName(value: string): value is IssuerName {
  return (ISSUERS as readonly string[]).includes(value);
}

/** Public key sets, one per issuer; they keep answering whatever fault is set. */
export function jwksRoutes(ctx: DevCoreContext): Router {
  const router = Router();
  router.get('/issuers/:issuer/jwks.json', (req, res) => {
    const { issuer } = req.params;
    if (!isIssuerName(issuer)) {
      sendError(res, 404, 'not_found', 'no such issuer');
      return;
    }
    res.set('Cache-Control', 'public, max-age=300').json(jwksOf(ctx.keys, issuer));
  });
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  return router;
}
