import type { RoomReader } from './mention-draft.ts';

interface Props {
  id: string;
  suggestions: RoomReader[];
  active: number;
  /** Whether the directory is still being asked, with nothing to show yet. */
  loading: boolean;
  onPick(reader: RoomReader): void;
}

/** ID of the option element at `index`, for the textarea's `aria-activedescendant`. */
export function optionId(listId: string, index: number): string {
  return `${listId}-${index}`;
}

/**
 * The `@` picker's list under the message box. The box keeps the focus (ArrowUp/Down move the active
 * option, Enter or Tab picks it, Escape closes; see Composer), so a pointer press picks without
 * taking the focus away.
 */
export function MentionPicker({ id, suggestions, active, loading, onPick }: Props) {
  if (suggestions.length === 0) {
    return (
      <div id={id} class="mention-picker empty" role="status">
        {loading ? 'Looking up who can read this room…' : 'No one in this room matches.'}
      </div>
    );
  }
  return (
    <ul id={id} class="mention-picker" role="listbox" aria-label="People and bots who can read this room">
      {suggestions.map((reader, index) => (
        <li
          key={`${reader.kind}:${reader.id}`}
          id={optionId(id, index)}
          role="option"
          aria-selected={index === active}
          class={`mention-option${index === active ? ' active' : ''}`}
          data-principal-id={reader.id}
          onMouseDown={(event) => {
            event.preventDefault();
            onPick(reader);
          }}
        >
          <span class="mention-option-id">{reader.id}</span>
          <span class="mention-option-kind">{reader.kind === 'bot' ? 'bot' : reader.role === 'write' ? 'member · writes' : 'member · reads'}</span>
        </li>
      ))}
    </ul>
  );
}
