import type { RoomResponse } from '@chat/contracts';
import type { RoomRow, RoomScope } from '@chat/store';

/** A stored room. `version` is the room's sequence: it changes with every append and never repeats. */
export function presentRoom(row: RoomRow): RoomResponse {
  return {
    repositoryId: row.repositoryId,
    kind: row.kind,
    state: row.state,
    persisted: true,
    messageCount: row.lastSeq,
    branchId: row.branchId,
    roomId: row.roomId,
    createdAt: row.createdAt.toISOString(),
    lastMessageAt: row.lastMessageAt?.toISOString() ?? null,
    sealedAt: row.sealedAt?.toISOString() ?? null,
    version: row.lastSeq,
  };
}

/** A room nobody has written to yet: empty and virtual, sealed when its scope is. */
export function presentVirtualRoom(scope: RoomScope, sealed: boolean): RoomResponse {
  return {
    repositoryId: scope.repositoryId,
    kind: scope.branchId === null ? 'repository' : 'branch',
    state: sealed ? 'sealed' : 'active',
    persisted: false,
    messageCount: 0,
    branchId: scope.branchId,
    roomId: null,
    createdAt: null,
    lastMessageAt: null,
    sealedAt: null,
    version: null,
  };
}
