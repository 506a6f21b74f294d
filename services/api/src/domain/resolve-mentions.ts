import { parseCoreResourceHeader, type CoreClient, type VerifiedPrincipal } from '@chat/authz-client';
import { AppError, type MentionBinding } from '@chat/contracts';
import type { RoomScope } from '@chat/store';

/**
 * Checks with core that every mentioned principal exists and may read the scope. A human author
 * must lend a core resource credential for that lookup (spec section 5); a bot's grant is enough.
 */
export async function resolveMentionTargets(
  core: CoreClient,
  input: { principal: VerifiedPrincipal; scope: RoomScope; mentions: MentionBinding[]; coreAuthorization: unknown; requestId: string },
): Promise<void> {
  let resourceToken: string | undefined;
  if (input.principal.kind === 'user') {
    const header = input.coreAuthorization;
    resourceToken = parseCoreResourceHeader(typeof header === 'string' ? header : Array.isArray(header) ? header.join(',') : undefined);
    if (resourceToken === undefined) {
      throw new AppError('CORE_RESOURCE_TOKEN_REQUIRED', 'Mentions by a person need the X-Service-Core-Authorization header.');
    }
  }
  const targets = uniqueTargets(input.mentions);
  const resolution = await core.resolveMentions({
    repositoryId: input.scope.repositoryId,
    ...(input.scope.branchId === null ? {} : { branchId: input.scope.branchId }),
    targets,
    ...(resourceToken === undefined ? {} : { coreResourceToken: resourceToken }),
  }, { requestId: input.requestId });
  const valid = new Set(resolution.targets.filter((t) => t.valid).map((t) => `${t.kind}:${t.id}`));
  const invalid = targets.find((t) => !valid.has(`${t.kind}:${t.id}`));
  if (invalid) throw new AppError('MENTION_TARGET_INVALID', `Mention target ${invalid.kind} "${invalid.id}" does not exist or cannot read this room.`);
}

function uniqueTargets(mentions: MentionBinding[]): Array<{ kind: 'human' | 'bot'; id: string }> {
  const seen = new Map<string, { kind: 'human' | 'bot'; id: string }>();
  for (const m of mentions) seen.set(`${m.principalKind}:${m.principalId}`, { kind: m.principalKind, id: m.principalId });
  return [...seen.values()];
}
