import { signal } from '@preact/signals';
import type { RoomRef } from '@chat/client';

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
const ROOM_HASH = new RegExp(`^#/r/(${ULID})(?:/b/(${ULID}))?(?:\\?m=(${ULID}))?$`);

/** A room address in the page's fragment, and optionally a message to show in it. */
export interface Route {
  room: RoomRef | undefined;
  messageId: string | undefined;
}

/** `#/r/<repositoryId>[/b/<branchId>][?m=<messageId>]`; anything else names no room. */
export function parseHash(hash: string): Route {
  const match = ROOM_HASH.exec(hash);
  if (!match) return { room: undefined, messageId: undefined };
  return { room: { repositoryId: match[1]!, branchId: match[2] ?? null }, messageId: match[3] };
}

export function roomHash(room: RoomRef, messageId?: string): string {
  return `#/r/${room.repositoryId}${room.branchId ? `/b/${room.branchId}` : ''}${messageId ? `?m=${messageId}` : ''}`;
}

export function sameRoom(a: RoomRef | undefined, b: RoomRef | undefined): boolean {
  return !!a && !!b && a.repositoryId === b.repositoryId && (a.branchId ?? null) === (b.branchId ?? null);
}

/** The current fragment, kept in step with the address bar. */
export const currentHash = signal(typeof location === 'undefined' ? '' : location.hash);
if (typeof window !== 'undefined') window.addEventListener('hashchange', () => (currentHash.value = location.hash));

export function navigate(hash: string): void {
  if (location.hash === hash) currentHash.value = hash;
  else location.hash = hash;
}
