import type { PublicRoute } from '@chat/http-kit';
import type { DevCoreContext } from '../domain/dev-core-context.ts';
import { ISSUERS, jwksOf, type IssuerName } from '../domain/signing-keys.ts';
import { CoreRefusalError } from './http-errors.ts';

/** How long a verifier may keep a key set before asking again. @defaultValue 300 seconds */
const JWKS_MAX_AGE_SECONDS = 300;

function isIssuerName(value: string): value is IssuerName {
  return (ISSUERS as readonly string[]).includes(value);
}

/** Public key sets, one per issuer, and the health check; they keep answering whatever fault is set. */
export function jwksRoutes(ctx: DevCoreContext): PublicRoute[] {
  return [
    {
      method: 'GET',
      path: '/issuers/:issuer/jwks.json',
      access: 'public',
      handle: ({ res, params }) => {
        const issuer = params['issuer']!;
        if (!isIssuerName(issuer)) throw new CoreRefusalError(404, 'not_found', 'no such issuer');
        // Written here rather than returned: the pipeline's JSON answers are never cached, and a key set may be.
        const text = JSON.stringify(jwksOf(ctx.keys, issuer));
        res.statusCode = 200;
        res.setHeader('Content-Type', 'application/json; charset=utf-8');
        res.setHeader('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
        res.setHeader('Content-Length', Buffer.byteLength(text));
        res.end(text);
      },
    },
    { method: 'GET', path: '/healthz', access: 'public', handle: () => ({ status: 200, body: { status: 'ok' } }) },
  ];
}
