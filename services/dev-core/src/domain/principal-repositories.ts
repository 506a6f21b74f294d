import { isPrincipalInvalid, scopeStateOf, type CorePrincipal } from './authorization.ts';
import type { FixtureStore } from './fixture-store.ts';

/** A repository the principal may read; an archived one is `sealed`, as authorize calls it. */
export interface ReadableRepository {
  repositoryId: string;
  scopeState: 'active' | 'sealed';
}

export type RepositoryDiscovery = { decision: 'allow'; repositories: ReadableRepository[] } | { decision: 'principal_invalid' };

/**
 * Core's discovery: every repository where `principal` may read, the set authorize would allow a
 * `read` on, sorted by ID. A bot reads where it holds an active grant with `room:read` (a repository
 * with several such grants is listed once); a user where it is a member, whatever its role. An
 * invalid principal is refused as authorize refuses it. One pass over the bot's grants or over the
 * repositories, so a fixture of thousands answers at once.
 */
export function discoverRepositories(store: FixtureStore, principal: CorePrincipal): RepositoryDiscovery {
  if (isPrincipalInvalid(store, principal)) return { decision: 'principal_invalid' };
  const readable = new Map<string, ReadableRepository>();
  if (principal.kind === 'bot') {
    for (const grant of store.findBot(principal.id)!.grants) {
      if (grant.state !== 'active' || !grant.capabilities.includes('room:read') || readable.has(grant.repositoryId)) continue;
      const repository = store.findRepository(grant.repositoryId);
      if (repository) readable.set(repository.id, { repositoryId: repository.id, scopeState: scopeStateOf(repository, undefined) });
    }
  } else {
    for (const repository of store.current.repositories) {
      if (Object.hasOwn(repository.members, principal.id)) readable.set(repository.id, { repositoryId: repository.id, scopeState: scopeStateOf(repository, undefined) });
    }
  }
  return { decision: 'allow', repositories: [...readable.values()].sort((a, b) => (a.repositoryId < b.repositoryId ? -1 : 1)) };
}
