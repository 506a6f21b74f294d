/**
 * Where core's issuers, key sets and service API live, all derived from one base URL
 * (docs/core-contract.md). A trailing slash on the base URL is ignored.
 */
interface CoreEndpoints {
  marketplaceIssuer: string;
  marketplaceJwks: URL;
  botsIssuer: string;
  botsJwks: URL;
  authorize: URL;
  authorizeBatch: URL;
  resolveMentions: URL;
  principalRepositories: URL;
}

/** Derives every core address chat uses from core's base URL. */
export function coreEndpoints(coreUrl: string): CoreEndpoints {
  const base = coreUrl.replace(/\/+$/, '');
  return {
    marketplaceIssuer: `${base}/marketplace`,
    marketplaceJwks: new URL(`${base}/issuers/marketplace/jwks.json`),
    botsIssuer: `${base}/bots`,
    botsJwks: new URL(`${base}/issuers/bots/jwks.json`),
    authorize: new URL(`${base}/internal/v1/authorize`),
    authorizeBatch: new URL(`${base}/internal/v1/authorize/batch`),
    resolveMentions: new URL(`${base}/internal/v1/mentions/resolve`),
    principalRepositories: new URL(`${base}/internal/v1/principals/repositories`),
  };
}
