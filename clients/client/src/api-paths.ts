import type { RoomRef, SearchScope } from './client-options.ts';

const segment = encodeURIComponent;

/** Path of a repository (`/v1/repositories/{id}`). */
function repositoryPath(repositoryId: string): string {
  return `/v1/repositories/${segment(repositoryId)}`;
}

/** Path of a room (`/v1/repositories/{id}/room` or its branch form). */
export function roomPath(room: RoomRef): string {
  const repository = repositoryPath(room.repositoryId);
  return room.branchId ? `${repository}/branches/${segment(room.branchId)}/room` : `${repository}/room`;
}

/** Path of the caller's inbox in a repository. */
export function inboxPath(repositoryId: string): string {
  return `${repositoryPath(repositoryId)}/inbox`;
}

/** The caller's notifications across every repository it may read (the principal-feed extension). */
export const PRINCIPAL_INBOX_PATH = '/v1/inbox';

/** The caller's webhooks (the webhooks extension). */
export const WEBHOOKS_PATH = '/v1/webhooks';

/** Path of one of the caller's webhooks. */
export function webhookPath(webhookId: string): string {
  return `${WEBHOOKS_PATH}/${segment(webhookId)}`;
}

/**
 * Path of a search (the search extension): searchRepository for a repository scope,
 * searchRepositoryRoom or searchBranchRoom for a room scope by its `branchId`.
 */
export function searchPath(scope: SearchScope): string {
  return 'room' in scope ? `${roomPath(scope.room)}/search` : `${repositoryPath(scope.repositoryId)}/search`;
}
