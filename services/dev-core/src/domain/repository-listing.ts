import type { FixtureBranch, FixtureStore } from './fixture-store.ts';
import type { FixtureRepository } from './fixture.schema.ts';

/** A branch as core shows it to a reader: `name` is null when core holds none for it. */
export interface ListedBranch {
  id: string;
  name: string | null;
  state: 'active' | 'deleted';
}

/** A repository the person can read, with the person's role and every branch of it. */
export interface ListedRepository {
  id: string;
  name: string | null;
  state: 'active' | 'archived';
  role: 'read' | 'write';
  branches: ListedBranch[];
}

/** Orders by name, then ID; a nameless entry after the named ones, so a list reads alphabetically. */
function byNameThenId(a: { id: string; name: string | null }, b: { id: string; name: string | null }): number {
  if (a.name !== b.name) {
    if (a.name === null) return 1;
    if (b.name === null) return -1;
    return a.name < b.name ? -1 : 1;
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

function listedBranch(branch: FixtureBranch): ListedBranch {
  return { id: branch.id, name: branch.name ?? null, state: branch.state };
}

/**
 * The repositories `userId` can read (a member with either role, archived ones included, as they stay
 * readable), each with its role and all its branches (deleted ones too: their rooms keep their history).
 * Read live from the fixture, so a membership removed drops the repository at the next call.
 */
export function listReadableRepositories(store: FixtureStore, userId: string): ListedRepository[] {
  return store.current.repositories
    .filter((repository: FixtureRepository) => Object.hasOwn(repository.members, userId))
    .map((repository) => ({
      id: repository.id,
      name: repository.name ?? null,
      state: repository.state,
      role: repository.members[userId]!,
      branches: repository.branches.map(listedBranch).sort(byNameThenId),
    }))
    .sort(byNameThenId);
}

/**
 * The branch of a repository `userId` can read that `name` names: the active branch of that name, else
 * the most recently created deleted one (branch IDs are ULIDs, so the greatest is the newest).
 * `repository_not_found` when the repository is unknown or unreadable (answered alike, so nobody learns
 * which repositories exist), `branch_not_found` when no branch has the name.
 */
export function resolveBranchName(
  store: FixtureStore,
  repositoryId: string,
  name: string,
  userId: string,
): ListedBranch | 'repository_not_found' | 'branch_not_found' {
  const repository = store.findRepository(repositoryId);
  if (repository === undefined || !Object.hasOwn(repository.members, userId)) return 'repository_not_found';
  const named = repository.branches.filter((b) => b.name === name);
  const active = named.find((b) => b.state === 'active');
  const newestDeleted = named.filter((b) => b.state === 'deleted').sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  const branch = active ?? newestDeleted;
  return branch === undefined ? 'branch_not_found' : listedBranch(branch);
}
