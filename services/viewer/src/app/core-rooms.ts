import type { RoomRef } from '@chat/client';
import { roomHash } from './route.ts';

/** A branch as core lists it (docs/core-contract.md section 4.5); `name` is null where core has none. */
export interface CoreBranch {
  id: string;
  name: string | null;
  state: 'active' | 'deleted';
}

/** A repository the signed-in person can read, as core lists it. */
export interface CoreRepository {
  id: string;
  name: string | null;
  state: 'active' | 'archived';
  role: 'read' | 'write';
  branches: CoreBranch[];
}

/** What the list shows of a nameless repository or branch: the end of its ULID, the part that differs. */
export function shortId(id: string): string {
  return `…${id.slice(-8)}`;
}

export function displayName(entry: { id: string; name: string | null }): string {
  return entry.name ?? shortId(entry.id);
}

/** The names of a room for its header: from core's list, or short IDs for a room the list does not hold. */
export function roomTitle(repositories: readonly CoreRepository[] | undefined, room: RoomRef): { repository: string; branch: string | undefined } {
  const repository = repositories?.find((r) => r.id === room.repositoryId);
  const branch = room.branchId ? repository?.branches.find((b) => b.id === room.branchId) : undefined;
  return {
    repository: repository ? displayName(repository) : shortId(room.repositoryId),
    branch: room.branchId ? (branch ? displayName(branch) : shortId(room.branchId)) : undefined,
  };
}

/** A room's names as one line, as its header shows them: `repository` or `repository · branch`. */
export function roomTitleText(title: { repository: string; branch: string | undefined }): string {
  return title.branch === undefined ? title.repository : `${title.repository} · ${title.branch}`;
}

/**
 * The list narrowed to `text`, ignoring case and surrounding blanks: a repository whose name holds it
 * keeps all its branches; otherwise only the branches whose name holds it, under their repository.
 */
export function filterRooms(repositories: readonly CoreRepository[], text: string): { repository: CoreRepository; branches: CoreBranch[] }[] {
  const needle = text.trim().toLowerCase();
  const matches = (entry: { id: string; name: string | null }) => displayName(entry).toLowerCase().includes(needle);
  return repositories.flatMap((repository) => {
    const whole = needle === '' || matches(repository);
    const branches = whole ? repository.branches : repository.branches.filter(matches);
    return whole || branches.length > 0 ? [{ repository, branches }] : [];
  });
}

/** Every room of the list, repository room first, then its branch rooms, as `RoomRef`s keyed by their address. */
export function roomsOf(repositories: readonly CoreRepository[]): RoomRef[] {
  return repositories.flatMap((r) => [{ repositoryId: r.id, branchId: null }, ...r.branches.map((b) => ({ repositoryId: r.id, branchId: b.id }))]);
}

/**
 * The room a signed-in person lands on without an address: the first active repository's room, as an
 * archived one is sealed and nobody starts a day in it.
 */
export function landingRoom(repositories: readonly CoreRepository[]): RoomRef | undefined {
  const first = repositories.find((r) => r.state === 'active') ?? repositories[0];
  return first ? { repositoryId: first.id, branchId: null } : undefined;
}

async function coreGet<T>(coreUrl: string, path: string, coreAccessToken: string): Promise<T> {
  const response = await fetch(new URL(path, coreUrl), { headers: { Authorization: `Bearer ${coreAccessToken}` }, credentials: 'omit', cache: 'no-store' });
  if (!response.ok) throw new Error(`core answered ${response.status} for ${path.split('?')[0]}`);
  return (await response.json()) as T;
}

/**
 * The repositories the person can read, with their branches (`GET /api/user/repositories`), active
 * repositories first and archived ones after them, each group in core's order (by name).
 */
export async function fetchCoreRepositories(coreUrl: string, coreAccessToken: string): Promise<CoreRepository[]> {
  const { repositories } = await coreGet<{ repositories: CoreRepository[] }>(coreUrl, '/api/user/repositories', coreAccessToken);
  return [...repositories.filter((r) => r.state === 'active'), ...repositories.filter((r) => r.state !== 'active')];
}

/** The address of a branch named `name` in a repository, resolved by core, or undefined when core knows no such branch. */
export async function resolveBranchHash(coreUrl: string, coreAccessToken: string, repositoryId: string, name: string): Promise<string | undefined> {
  try {
    const path = `/api/repositories/${encodeURIComponent(repositoryId)}/branches/lookup?name=${encodeURIComponent(name)}`;
    const { branch } = await coreGet<{ branch: CoreBranch }>(coreUrl, path, coreAccessToken);
    return roomHash({ repositoryId, branchId: branch.id });
  } catch {
    return undefined;
  }
}

/**
 * The deployment's configured rooms (`VIEWER_ROOMS`) in the shape of core's list, shown only when
 * core's list cannot be read: each label names its room, grouped under its repository.
 */
export function configuredRepositories(rooms: readonly { repositoryId: string; branchId?: string; label: string }[]): CoreRepository[] {
  const byId = new Map<string, CoreRepository>();
  for (const room of rooms) {
    let repository = byId.get(room.repositoryId);
    if (!repository) byId.set(room.repositoryId, (repository = { id: room.repositoryId, name: null, state: 'active', role: 'read', branches: [] }));
    if (room.branchId) repository.branches.push({ id: room.branchId, name: room.label, state: 'active' });
    else repository.name = room.label;
  }
  return [...byId.values()];
}
