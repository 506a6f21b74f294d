import type { FixtureStore } from './fixture-store.ts';

export interface MentionTarget {
  kind: 'human' | 'bot';
  id: string;
}

export interface MentionResolutionRequest {
  repositoryId: string;
  branchId?: string | undefined;
  targets: MentionTarget[];
}

export interface ResolvedMentionTarget extends MentionTarget {
  valid: boolean;
}

/**
 * A target is valid when it exists and may read the scope: a human who is a member of the repository,
 * or a bot with an active `room:read` grant on it. A scope that does not exist (unknown repository,
 * branch of another repository) makes every target invalid. Answers keep the request's order.
 */
export function resolveMentions(store: FixtureStore, request: MentionResolutionRequest): ResolvedMentionTarget[] {
  const repository = store.findRepository(request.repositoryId);
  const scopeExists =
    repository !== undefined &&
    (request.branchId === undefined || repository.branches.some((b) => b.id === request.branchId));
  return request.targets.map((target) => {
    if (!scopeExists || !repository) return { ...target, valid: false };
    if (target.kind === 'human') return { ...target, valid: Object.hasOwn(repository.members, target.id) };
    const bot = store.findBot(target.id);
    const valid =
      bot?.grants.some(
        (g) => g.state === 'active' && g.repositoryId === repository.id && g.capabilities.includes('room:read'),
      ) ?? false;
    return { ...target, valid };
  });
}
