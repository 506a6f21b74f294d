import { AppError } from '@chat/contracts';
import type { AuthorizationAction } from './core-contract.schema.ts';
import type { CallOptions, CoreClient } from './core-client.ts';
import { corePrincipalOf } from './core-principal.ts';
import type { VerifiedPrincipal } from './verified-principal.ts';

/** The attribution fields a message stores (spec section 2), all from one core decision. */
interface DecisionAttribution {
  authorizationDecisionId: string;
  authorizingSubjectId: string;
  authorizingSubjectKind: 'user' | 'organization';
  botCredentialId: string | null;
  botGrantId: string | null;
}

export interface ScopeAuthorization {
  decisionId: string;
  scopeState: 'active' | 'sealed';
  attribution: DecisionAttribution;
}

export interface ScopeRequest {
  repositoryId: string;
  branchId?: string;
  action: AuthorizationAction;
}

/**
 * Asks core whether `principal` may act on the scope and turns the answer into what a route needs.
 * The principal goes with its token's identifiers, so core refuses a revoked token on every request
 * (the verified-token cache only spares the signature check, never this call).
 * `deny` → AUTHORIZATION_DENIED (403), `principal_invalid` → TOKEN_REJECTED (401), an allow that
 * lacks a bot's attribution → AUTHORIZATION_UNAVAILABLE (core answered something it must not).
 */
export async function authorizeScope(
  core: CoreClient,
  principal: VerifiedPrincipal,
  scope: ScopeRequest,
  options?: CallOptions,
): Promise<ScopeAuthorization> {
  const decision = await core.authorize(
    {
      principal: corePrincipalOf(principal),
      repositoryId: scope.repositoryId,
      ...(scope.branchId === undefined ? {} : { branchId: scope.branchId }),
      action: scope.action,
    },
    options,
  );
  if (decision.decision === 'principal_invalid') {
    throw new AppError('TOKEN_REJECTED', 'The bearer token was rejected.');
  }
  if (decision.decision === 'deny') {
    throw new AppError('AUTHORIZATION_DENIED', 'Access to this scope is denied.');
  }
  if (principal.kind === 'user') {
    return {
      decisionId: decision.decisionId,
      scopeState: decision.scopeState,
      attribution: {
        authorizationDecisionId: decision.decisionId,
        authorizingSubjectId: principal.id,
        authorizingSubjectKind: 'user',
        botCredentialId: null,
        botGrantId: null,
      },
    };
  }
  const { subject, botCredentialId, botGrantId } = decision;
  if (!subject || botCredentialId === undefined || botGrantId === undefined) {
    throw new AppError('AUTHORIZATION_UNAVAILABLE', 'Authorization is unavailable.', {
      cause: new Error('core allowed a bot without its grant attribution'),
    });
  }
  return {
    decisionId: decision.decisionId,
    scopeState: decision.scopeState,
    attribution: {
      authorizationDecisionId: decision.decisionId,
      authorizingSubjectId: subject.id,
      authorizingSubjectKind: subject.kind,
      botCredentialId,
      botGrantId,
    },
  };
}
