export { createTokenVerifier, type TokenVerifier, type TokenVerifierOptions } from './token-verifier.ts';
export type { VerifiedPrincipal } from './verified-principal.ts';
export { createCoreClient, type CallOptions, type CoreClient, type CoreClientOptions, type CoreOperation } from './core-client.ts';
export { createCoreTransport, type CoreHttpResponse, type CoreTransport } from './core-transport.ts';
export {
  authorizeScope,
  type DecisionAttribution,
  type ScopeAuthorization,
  type ScopeRequest,
} from './authorize-scope.ts';
export { extractBearerToken, parseCoreResourceHeader, MAX_TOKEN_BYTES } from './bearer-header.ts';
export { coreEndpoints, type CoreEndpoints } from './core-endpoints.ts';
export {
  authorizationDecisionSchema,
  mentionResolutionSchema,
  type AuthorizationAction,
  type AuthorizationDecision,
  type AuthorizationRequest,
  type MentionAuthor,
  type MentionResolution,
  type MentionResolutionRequest,
  type MentionTarget,
} from './core-contract.schema.ts';
