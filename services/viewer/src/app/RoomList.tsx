import { useSignal } from '@preact/signals';
import type { RoomRef } from '@chat/client';
import { displayName, filterRooms, type CoreRepository } from './core-rooms.ts';
import { roomHash } from './route.ts';
import { unreadText } from './unread.ts';

interface Props {
  /** Core's list; undefined while it is read. */
  repositories: readonly CoreRepository[] | undefined;
  open: RoomRef | undefined;
  /** Unread counts by room address. */
  unread: ReadonlyMap<string, number>;
}

function RoomLink({ hash, label, open, unread, note }: { hash: string; label: string; open: boolean; unread: number | undefined; note?: string | undefined }) {
  return (
    <>
      <a href={hash} aria-current={open ? 'page' : undefined}>
        {label}
      </a>
      {note ? <span class="room-note">{note}</span> : null}
      {unread ? (
        <span class="unread" aria-label={`${unreadText(unread)} unread`}>
          {unreadText(unread)}
        </span>
      ) : null}
    </>
  );
}

/**
 * The rooms the person can read, from core: each repository's room, and under it its branch rooms by
 * name, narrowed by the filter box as the person types ({@link filterRooms}).
 */
export function RoomList({ repositories, open, unread }: Props) {
  const filter = useSignal('');
  const openHash = open ? roomHash(open) : undefined;
  const shown = filterRooms(repositories ?? [], filter.value);

  return (
    <nav class="rooms" aria-label="Rooms">
      <input type="search" class="room-filter" placeholder="Filter rooms" aria-label="Filter rooms" value={filter.value} onInput={(e) => (filter.value = (e.currentTarget as HTMLInputElement).value)} />
      {repositories === undefined ? <p class="loading">Loading rooms…</p> : null}
      {repositories !== undefined && shown.length === 0 ? <p class="empty">{repositories.length === 0 ? 'No repositories to read.' : 'No room matches.'}</p> : null}
      <ul>
        {shown.map(({ repository, branches }) => {
          const hash = roomHash({ repositoryId: repository.id, branchId: null });
          return (
            <li key={hash} class="repository">
              <RoomLink hash={hash} label={displayName(repository)} open={hash === openHash} unread={unread.get(hash)} note={repository.state === 'archived' ? 'sealed' : undefined} />
              {branches.length > 0 ? (
                <ul class="branches" aria-label={`Branches of ${displayName(repository)}`}>
                  {branches.map((branch) => {
                    const branchHash = roomHash({ repositoryId: repository.id, branchId: branch.id });
                    return (
                      <li key={branchHash}>
                        <RoomLink hash={branchHash} label={displayName(branch)} open={branchHash === openHash} unread={unread.get(branchHash)} note={branch.state === 'deleted' ? 'deleted' : undefined} />
                      </li>
                    );
                  })}
                </ul>
              ) : null}
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
