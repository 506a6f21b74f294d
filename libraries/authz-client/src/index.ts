export { createTokenVerifier, type TokenVerifier } from './token-verifier.ts';
export type { VerifiedPrincipal } from './verified-principal.ts';
export { createCoreClient, type CallOptions, type CoreClient, type CoreOperation } from './core-client.ts';
export { createCoreTransport, type CoreTransport } from './core-transport.ts';
export {
  authorizeScope,
  type ScopeAuthorization,
  type ScopeRequest,
} from './authorize-scope.ts';
export { decideScopeAccess, type RequestScope, type ScopeAccess } from './scope-access.ts';
export { decidePrincipalAccess, listReadableRepositories, type PrincipalAccess } from './principal-access.ts';
export { extractBearerToken, parseCoreResourceHeader } from './bearer-header.ts';
export { coreEndpoints } from './core-endpoints.ts';
export {
  authorizationDecisionSchema,
  mentionResolutionSchema,
  repositoryListingSchema,
  type AuthorizationAction,
  type AuthorizationDecision,
  type AuthorizationRequest,
  type CorePrincipal,
  type MentionResolution,
  type MentionResolutionRequest,
  type MentionTarget,
  type RepositoryListing,
  type RepositoryListingRequest,
} from './core-contract.schema.ts';
