import { signal } from '@preact/signals';
import type { RoomRef } from '@chat/client';

const ULID = '[0-9A-HJKMNP-TV-Z]{26}';
/** A message cursor as the service hands them out: 36 characters of base64url. */
const CURSOR = '[A-Za-z0-9_-]{36}';
const ROOM_HASH = new RegExp(`^#/r/(${ULID})(?:/b/(${ULID}))?(?:/m/(${ULID})(?:/(${CURSOR}))?|\\?m=(${ULID}))?$`);

/** A room address in the page's fragment, and optionally a message to show in it. */
export interface Route {
  room: RoomRef | undefined;
  messageId: string | undefined;
  /**
   * The message's cursor, when the address is a permalink: the room is read around that position
   * directly, whatever its age, instead of being searched from the newest message back.
   */
  cursor: string | undefined;
}

/**
 * `#/r/<repositoryId>[/b/<branchId>]` names a room; `/m/<messageId>[/<cursor>]` after it (a
 * permalink) or `?m=<messageId>` (a jump from the inbox) a message in it. Anything else names no room.
 */
export function parseHash(hash: string): Route {
  const match = ROOM_HASH.exec(hash);
  if (!match) return { room: undefined, messageId: undefined, cursor: undefined };
  return { room: { repositoryId: match[1]!, branchId: match[2] ?? null }, messageId: match[3] ?? match[5], cursor: match[4] };
}

const BRANCH_NAME_HASH = new RegExp(`^#/r/(${ULID})/branch/([^/?#]+)$`);

/**
 * `#/r/<repositoryId>/branch/<branch name, URL-encoded>`: a branch room named by its branch's name,
 * which core resolves to the branch ID (a name can move to a new branch; the ID form cannot).
 */
export function parseBranchNameHash(hash: string): { repositoryId: string; name: string } | undefined {
  const match = BRANCH_NAME_HASH.exec(hash);
  if (!match) return undefined;
  try {
    return { repositoryId: match[1]!, name: decodeURIComponent(match[2]!) };
  } catch {
    return undefined;
  }
}

export function branchNameHash(repositoryId: string, name: string): string {
  return `#/r/${repositoryId}/branch/${encodeURIComponent(name)}`;
}

export function roomHash(room: RoomRef, messageId?: string): string {
  return `#/r/${room.repositoryId}${room.branchId ? `/b/${room.branchId}` : ''}${messageId ? `?m=${messageId}` : ''}`;
}

/** The permalink fragment of a message: its ID, and its cursor when known. */
export function messageHash(room: RoomRef, messageId: string, cursor: string | undefined): string {
  return `${roomHash(room)}/m/${messageId}${cursor ? `/${cursor}` : ''}`;
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
