import { and, eq, sql } from 'drizzle-orm';
import type { ChatDb } from './database.ts';
import { rooms, type RoomRow } from './schema.ts';
import { storeCall } from './store-errors.ts';

/** A room's place: the repository, and the branch for branch rooms. */
export interface RoomScope {
  repositoryId: string;
  branchId: string | null;
}

/** The unique key of a room's scope; a branch ID is never reused, so it is stable forever. */
export function roomScopeKey(scope: RoomScope): string {
  return scope.branchId === null ? `repo:${scope.repositoryId}` : `branch:${scope.repositoryId}:${scope.branchId}`;
}

export interface RoomRepository {
  find(scope: RoomScope): Promise<RoomRow | null>;
  findById(roomId: string): Promise<RoomRow | null>;
  /** Creates the room if it does not exist yet and returns it (concurrent callers get the same row). */
  materialize(scope: RoomScope, init: { roomId: string; now: Date }): Promise<RoomRow>;
  /** Seals an active room; a sealed room stays sealed. Returns the row as it now is, or null if none. */
  seal(scope: RoomScope, at: Date): Promise<RoomRow | null>;
}

export function createRoomRepository(db: ChatDb): RoomRepository {
  const find = (scope: RoomScope) =>
    storeCall(async () => {
      const [row] = await db.select().from(rooms).where(eq(rooms.scopeKey, roomScopeKey(scope))).limit(1);
      return row ?? null;
    });
  return {
    find,
    findById: (roomId) =>
      storeCall(async () => {
        const [row] = await db.select().from(rooms).where(eq(rooms.roomId, roomId)).limit(1);
        return row ?? null;
      }),
    materialize: (scope, init) =>
      storeCall(async () => {
        await db.insert(rooms).values(newRoomValues(scope, init)).onConflictDoNothing({ target: rooms.scopeKey });
        const row = await find(scope);
        if (!row) throw new Error(`room ${roomScopeKey(scope)} vanished after insert`);
        return row;
      }),
    seal: (scope, at) =>
      storeCall(async () => {
        await db
          .update(rooms)
          .set({ state: 'sealed', sealedAt: sql`coalesce(${rooms.sealedAt}, ${at})` })
          .where(and(eq(rooms.scopeKey, roomScopeKey(scope)), eq(rooms.state, 'active')));
        return find(scope);
      }),
  };
}

export function newRoomValues(scope: RoomScope, init: { roomId: string; now: Date }): typeof rooms.$inferInsert {
  return {
    roomId: init.roomId,
    scopeKey: roomScopeKey(scope),
    repositoryId: scope.repositoryId,
    branchId: scope.branchId,
    kind: scope.branchId === null ? 'repository' : 'branch',
    state: 'active',
    createdAt: init.now,
  };
}
