import type { RoomResponse } from '@chat/contracts';
import type { RoomRow, RoomScope, Store } from '@chat/store';
import { presentRoom, presentVirtualRoom } from '../presenters/room.presenter.ts';

export interface RoomLookup {
  scope: RoomScope;
  /** Core's view of the scope at authorization time. */
  scopeSealed: boolean;
}

/**
 * The stored room, sealed first if core now reports its scope sealed (a room then stays sealed).
 * Null when the room does not exist yet.
 */
export async function loadRoom(deps: { store: Store; clock: () => Date }, lookup: RoomLookup): Promise<RoomRow | null> {
  const room = await deps.store.rooms.find(lookup.scope);
  if (room && lookup.scopeSealed && room.state === 'active') return deps.store.rooms.seal(lookup.scope, deps.clock());
  return room;
}

/** getRepositoryRoom / getBranchRoom: the room's metadata, or an empty virtual room. */
export async function getRoom(deps: { store: Store; clock: () => Date }, lookup: RoomLookup): Promise<RoomResponse> {
  const room = await loadRoom(deps, lookup);
  return room ? presentRoom(room) : presentVirtualRoom(lookup.scope, lookup.scopeSealed);
}
