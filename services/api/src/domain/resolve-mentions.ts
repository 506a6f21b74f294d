import { parseCoreResourceHeader, type CoreClient, type MentionResolutionRequest, type VerifiedPrincipal } from '@chat/authz-client';
import { AppError, type MentionBinding } from '@chat/contracts';
import type { RoomScope } from '@chat/store';

/**
 * The mention lookup an append will ask core for, built from the request alone (no call yet). A
 * human author must lend a core resource credential for it (spec section 5); a bot's grant is
 * enough. The author goes with it: core accepts the credential only as that author's own.
 */
export function mentionLookup(input: {
  principal: VerifiedPrincipal;
  scope: RoomScope;
  mentions: MentionBinding[];
  coreAuthorization: unknown;
}): MentionResolutionRequest {
  const scope = {
    repositoryId: input.scope.repositoryId,
    ...(input.scope.branchId === null ? {} : { branchId: input.scope.branchId }),
    targets: uniqueTargets(input.mentions),
  };
  if (input.principal.kind === 'bot') return { ...scope, author: { kind: 'bot', id: input.principal.id } };
  const header = input.coreAuthorization;
  const coreResourceToken = parseCoreResourceHeader(typeof header === 'string' ? header : Array.isArray(header) ? header.join(',') : undefined);
  if (coreResourceToken === undefined) {
    throw new AppError('CORE_RESOURCE_TOKEN_REQUIRED', 'Mentions by a person need the X-Service-Core-Authorization header.');
  }
  return { ...scope, author: { kind: 'user', id: input.principal.id }, coreResourceToken };
}

/** Checks with core that every mentioned principal exists and may read the scope. */
export async function resolveMentionTargets(core: CoreClient, lookup: MentionResolutionRequest, requestId: string): Promise<void> {
  const resolution = await core.resolveMentions(lookup, { requestId });
  const valid = new Set(resolution.targets.filter((t) => t.valid).map((t) => `${t.kind}:${t.id}`));
  const invalid = lookup.targets.find((t) => !valid.has(`${t.kind}:${t.id}`));
  if (invalid) throw new AppError('MENTION_TARGET_INVALID', `Mention target ${invalid.kind} "${invalid.id}" does not exist or cannot read this room.`);
}

function uniqueTargets(mentions: MentionBinding[]): Array<{ kind: 'human' | 'bot'; id: string }> {
  const seen = new Map<string, { kind: 'human' | 'bot'; id: string }>();
  for (const m of mentions) seen.set(`${m.principalKind}:${m.principalId}`, { kind: m.principalKind, id: m.principalId });
  return [...seen.values()];
}
