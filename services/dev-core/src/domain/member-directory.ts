import type { FixtureStore } from './fixture-store.ts';

/** The scope a core resource token needs for the member directory. */
export const MEMBERS_READ_SCOPE = 'core:members:read';

/** Someone who may read a room: a repository member with their role, or a bot with `room:read`. */
export type RoomReader = { kind: 'human'; id: string; role: 'read' | 'write' } | { kind: 'bot'; id: string };

/** The room a directory is asked for: a repository room, or a branch room when `branchId` is set. */
export interface DirectoryScope {
  repositoryId: string;
  branchId?: string | undefined;
}

/**
 * Who may read a room, by the rules `POST /internal/v1/mentions/resolve` applies to a target: the
 * repository's members (either role), then the bots with an active grant on the repository that
 * includes `room:read`, each list sorted by ID. A branch room has its repository's readers (a deleted
 * branch still belongs to it). Undefined when the scope does not exist or `viewerId` cannot read it,
 * which the caller answers alike, so the directory tells nobody which repositories exist.
 */
export function listRoomReaders(store: FixtureStore, scope: DirectoryScope, viewerId: string): RoomReader[] | undefined {
  const repository = store.findRepository(scope.repositoryId);
  if (repository === undefined || !Object.hasOwn(repository.members, viewerId)) return undefined;
  if (scope.branchId !== undefined && store.findBranch(repository.id, scope.branchId) === undefined) return undefined;
  const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const humans = Object.entries(repository.members)
    .map(([id, role]): RoomReader => ({ kind: 'human', id, role }))
    .sort(byId);
  const bots = store.current.bots
    .filter((bot) => bot.grants.some((g) => g.state === 'active' && g.repositoryId === repository.id && g.capabilities.includes('room:read')))
    .map((bot): RoomReader => ({ kind: 'bot', id: bot.id }))
    .sort(byId);
  return [...humans, ...bots];
}
