import { newUlid } from '@chat/contracts';
import type { FixtureStore } from './fixture-store.ts';
import type { FixtureRepository, GrantCapability } from './fixture.schema.ts';

export type AuthorizationAction = 'read' | 'write';

export interface AuthorizationRequest {
  /**
   * `tokenId` is the bearer token's `jti` and `clientId` a user token's `client_id`; both are
   * required for users, `tokenId` is optional for bots (their credential is what gets revoked).
   */
  principal: {
    kind: 'user' | 'bot';
    id: string;
    credentialId?: string | undefined;
    tokenId?: string | undefined;
    clientId?: string | undefined;
  };
  repositoryId: string;
  branchId?: string | undefined;
  action: AuthorizationAction;
}

/** The caller as chat names it to core, on every service call. */
export type CorePrincipal = AuthorizationRequest['principal'];

export interface AuthorizationDecision {
  decision: 'allow' | 'deny' | 'principal_invalid';
  decisionId: string;
  scopeState: 'active' | 'sealed';
  subject?: { kind: 'user' | 'organization'; id: string };
  botCredentialId?: string;
  botGrantId?: string;
}

const CAPABILITY_FOR_ACTION: Readonly<Record<AuthorizationAction, GrantCapability>> = {
  read: 'room:read',
  write: 'message:append',
};

/** The repository, when the scope exists; a branch must belong to it (a deleted branch still does). */
function resolveScope(store: FixtureStore, repositoryId: string, branchId: string | undefined) {
  const repository = store.findRepository(repositoryId);
  if (!repository) return undefined;
  if (branchId === undefined) return { repository, branch: undefined };
  const branch = store.findBranch(repositoryId, branchId);
  return branch ? { repository, branch } : undefined;
}

export function scopeStateOf(repository: FixtureRepository, branch: { state: string } | undefined): 'active' | 'sealed' {
  return repository.state === 'archived' || branch?.state === 'deleted' ? 'sealed' : 'active';
}

/**
 * Whether core refuses the principal itself, whatever it asks: a user named without its token's
 * `jti` and `client_id` (which could not be checked), a revoked token (by `jti`, or its app
 * uninstalled), a bot whose credential is unknown, another bot's or revoked. Its token must stop
 * working, not merely lose one permission. Authorization and discovery apply the same rules.
 */
export function isPrincipalInvalid(store: FixtureStore, principal: CorePrincipal): boolean {
  if (principal.kind === 'user' && (principal.tokenId === undefined || principal.clientId === undefined)) return true;
  if (store.isRevoked({ subjectId: principal.id, tokenId: principal.tokenId, clientId: principal.clientId })) return true;
  if (principal.kind === 'bot') {
    const credential = store.findBot(principal.id)?.credentials.find((c) => c.id === principal.credentialId);
    return credential?.state !== 'active';
  }
  return false;
}

/**
 * Decides one request the way core does. Every refusal has the same shape (`scopeState` "active", no
 * subject) whether the repository is unknown, the branch is foreign or the principal lacks access, so a
 * caller cannot learn that a scope exists. An invalid principal ({@link isPrincipalInvalid}) is
 * `principal_invalid`, checked before the scope.
 */
export function decideAuthorization(store: FixtureStore, request: AuthorizationRequest): AuthorizationDecision {
  const decisionId = newUlid();
  const refusal = (decision: 'deny' | 'principal_invalid'): AuthorizationDecision => ({
    decision,
    decisionId,
    scopeState: 'active',
  });
  const { principal } = request;
  if (isPrincipalInvalid(store, principal)) return refusal('principal_invalid');

  if (principal.kind === 'bot') {
    const bot = store.findBot(principal.id)!;
    const scope = resolveScope(store, request.repositoryId, request.branchId);
    if (!scope) return refusal('deny');
    const capability = CAPABILITY_FOR_ACTION[request.action];
    const grant = bot.grants.find(
      (g) => g.state === 'active' && g.repositoryId === request.repositoryId && g.capabilities.includes(capability),
    );
    if (!grant) return refusal('deny');
    return {
      decision: 'allow',
      decisionId,
      scopeState: scopeStateOf(scope.repository, scope.branch),
      subject: grant.subject,
      botCredentialId: principal.credentialId!,
      botGrantId: grant.id,
    };
  }

  const scope = resolveScope(store, request.repositoryId, request.branchId);
  if (!scope) return refusal('deny');
  const role = scope.repository.members[principal.id];
  const permitted = request.action === 'read' ? role !== undefined : role === 'write';
  if (!permitted) return refusal('deny');
  return {
    decision: 'allow',
    decisionId,
    scopeState: scopeStateOf(scope.repository, scope.branch),
    subject: { kind: 'user', id: principal.id },
  };
}
