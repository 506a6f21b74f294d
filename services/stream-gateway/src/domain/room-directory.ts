import type { RoomScope, Store } from '@chat/store';
import { roomScopeKey } from '@chat/store';

/** Room ids remembered per process; far more rooms than one gateway streams at once. */
const MAX_ENTRIES = 100_000;

/**
 * The ids of persisted rooms by scope, as the stream opens of this process need them. A room, once
 * created, is never deleted, and its scope never names another room (a branch ID is never reused),
 * so an id found once stays true for good: every open after a room's first reads its id here
 * instead of the store. Only rooms found persisted are kept; a virtual room is looked up every time,
 * since any instance may materialize it at any moment. Authorization is untouched by this: it runs
 * live, before the room is looked up at all.
 */
export class RoomDirectory {
  private readonly ids = new Map<string, string>();

  constructor(private readonly store: Store) {}

  /** The room's id, or undefined while the room is virtual. */
  async find(scope: RoomScope): Promise<string | undefined> {
    const key = roomScopeKey(scope);
    const known = this.ids.get(key);
    if (known !== undefined) return known;
    const room = await this.store.rooms.find(scope);
    if (room) this.remember(key, room.roomId);
    return room?.roomId;
  }

  /** Creates the room unless it exists (concurrent callers, on any instance, get the same room) and returns its id. */
  async materialize(scope: RoomScope, init: { roomId: string; now: Date }): Promise<string> {
    const room = await this.store.rooms.materialize(scope, init);
    this.remember(roomScopeKey(scope), room.roomId);
    return room.roomId;
  }

  private remember(key: string, roomId: string): void {
    // The oldest entry goes first: a bound on memory, not a freshness rule (every entry stays true).
    if (this.ids.size >= MAX_ENTRIES && !this.ids.has(key)) {
      const oldest = this.ids.keys().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
    this.ids.set(key, roomId);
  }
}

const directories = new WeakMap<Store, RoomDirectory>();

/** The room directory of a store, one per process and store. */
export function roomDirectoryOf(store: Store): RoomDirectory {
  let directory = directories.get(store);
  if (!directory) directories.set(store, (directory = new RoomDirectory(store)));
  return directory;
}
