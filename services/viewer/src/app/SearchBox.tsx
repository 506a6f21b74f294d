import { useSignal } from '@preact/signals';
import type { RoomRef } from '@chat/client';
import type { SearchRequest } from './message-search.ts';

interface Props {
  /** The open room, which "This room only" narrows the search to; undefined when none is open. */
  room: RoomRef | undefined;
  onSearch(request: SearchRequest): void;
}

/**
 * The search box: Enter searches the current repository, or with "This room only" the open room.
 * A blank query searches nothing.
 */
export function SearchBox({ room, onSearch }: Props) {
  const roomOnly = useSignal(false);
  return (
    <form
      class="search-form"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        const q = (new FormData(event.currentTarget).get('q') as string | null)?.trim() ?? '';
        if (q !== '') onSearch({ q, room: roomOnly.value && room ? room : undefined });
      }}
    >
      <input type="search" name="q" class="search-input" placeholder="Search this repository" aria-label="Search messages" autoComplete="off" />
      <label class="search-scope">
        <input type="checkbox" checked={roomOnly.value} disabled={!room} onChange={(event) => (roomOnly.value = (event.currentTarget as HTMLInputElement).checked)} />
        This room only
      </label>
    </form>
  );
}
