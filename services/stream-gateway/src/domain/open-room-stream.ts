import type { CursorCodec } from '@chat/contracts';
import { AppError } from '@chat/contracts';
import type { RoomScope, Store } from '@chat/store';
import { ulid } from 'ulid';
import { roomDirectoryOf } from './room-directory.ts';
import { createRoomSource } from './room-source.ts';
import type { StreamSource } from './stream-source.ts';

export interface RoomStreamTargetDeps {
  store: Store;
  cursors: CursorCodec;
  clock: () => Date;
}

export interface RoomStreamTarget {
  source: StreamSource;
  afterSeq: number;
}

/**
 * Resolves what a room stream reads, after authorization: the room (a virtual room is materialized
 * unless its scope is sealed: 409 STREAM_TARGET_INVALID) and the seq the client's cursor names.
 * No cursor can be valid for a virtual room, so one is refused before anything is created.
 * `reserve` runs after validation and before any room is created (the caller takes its stream lease there).
 */
export async function resolveRoomStreamTarget(
  deps: RoomStreamTargetDeps,
  input: { scope: RoomScope; scopeSealed: boolean; cursor: string | undefined; reserve?: () => Promise<void> },
): Promise<RoomStreamTarget> {
  const rooms = roomDirectoryOf(deps.store);
  let roomId = await rooms.find(input.scope);
  if (roomId === undefined) {
    if (input.scopeSealed) {
      throw new AppError('STREAM_TARGET_INVALID', 'This room is sealed and was never created, so it cannot be streamed.');
    }
    if (input.cursor !== undefined) throw new AppError('CURSOR_INVALID', 'The cursor is invalid for this room or inbox.');
  }
  const afterSeq = roomId !== undefined && input.cursor !== undefined ? deps.cursors.decode({ kind: 'room', roomId }, input.cursor) : 0;
  await input.reserve?.();
  roomId ??= await rooms.materialize(input.scope, { roomId: ulid(), now: deps.clock() });
  return { source: createRoomSource(deps, roomId), afterSeq };
}
