import type { RoomRef } from '@chat/client';
import type { RoomReader } from './mention-draft.ts';

/** A directory answer is used for this long before the next `@` asks core again. */
const FRESH_FOR_MS = 60_000;

/**
 * Who may read one room, from core's member directory (`GET /api/repositories/{id}/readers`, with the
 * core resource token; docs/core-contract.md section 4). Asked when the picker first opens and again
 * once the answer is a minute old, so a member added or removed shows up without a reload. A failed
 * call leaves the last answer (or none) and is asked again at the next `@`.
 */
export class MemberDirectory {
  private answer: { readers: RoomReader[]; at: number } | undefined;
  private pending: Promise<RoomReader[]> | undefined;

  constructor(
    private readonly coreUrl: string,
    private readonly room: RoomRef,
    private readonly coreAccessToken: string,
  ) {}

  /** The readers as last known, after a call to core if they are missing or stale. */
  async readers(now = Date.now()): Promise<RoomReader[]> {
    if (this.answer && now - this.answer.at < FRESH_FOR_MS) return this.answer.readers;
    this.pending ??= this.fetchReaders().then(
      (readers) => {
        this.answer = { readers, at: Date.now() };
        return readers;
      },
      () => this.answer?.readers ?? [],
    ).finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async fetchReaders(): Promise<RoomReader[]> {
    const url = new URL(`/api/repositories/${encodeURIComponent(this.room.repositoryId)}/readers`, this.coreUrl);
    if (this.room.branchId) url.searchParams.set('branchId', this.room.branchId);
    const response = await fetch(url, { headers: { Authorization: `Bearer ${this.coreAccessToken}` }, credentials: 'omit', cache: 'no-store' });
    if (!response.ok) throw new Error(`member directory answered ${response.status}`);
    return ((await response.json()) as { readers: RoomReader[] }).readers;
  }
}
