import { useSignal } from '@preact/signals';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { ChatApiError, newUlid, type ChatClient, type MentionBinding, type MessageResponse, type RoomRef } from '@chat/client';
import { describeError } from './error-text.ts';
import { MemberDirectory } from './member-directory.ts';
import { activeMentionQuery, carryMentions, insertMention, mentionBindings, suggestReaders, type DraftMention, type RoomReader } from './mention-draft.ts';
import { MentionPicker, optionId } from './mention-picker.tsx';

const MAX_BODY_BYTES = 16_384;
const PICKER_ID = 'mention-picker';

/** One logical send: its Idempotency-Key is made once and reused by every retry of it. */
interface Send {
  key: string;
  body: string;
  /** The structured mentions of `body`, spans fixed when it was sent, so a retry sends the same. */
  mentions: MentionBinding[];
  state: 'sending' | 'waiting' | 'failed';
  /** When a rate-limited send goes out again (ms since the epoch). */
  retryAt?: number;
  error?: { text: string; detail: string | undefined };
}

interface Props {
  client: ChatClient;
  room: RoomRef;
  /** Core, for the member directory the `@` picker lists. */
  coreUrl: string;
  /** The handoff's core resource token: it reads core's member directory, and chat needs it with a person's mentions. Without it, `@` is plain text. */
  coreAccessToken: string | undefined;
  onSent(message: MessageResponse): void;
  onSealed(): void;
  /** Chat no longer takes this sign-in (401). */
  onAccessLost(error: Error): void;
}

/**
 * Writes Markdown messages; Enter sends, Shift+Enter makes a new line. `@` opens a picker of the
 * room's readers; a picked one becomes a structured mention of the message.
 */
export function Composer({ client, room, coreUrl, coreAccessToken, onSent, onSealed, onAccessLost }: Props) {
  const draft = useSignal('');
  const input = useRef<HTMLTextAreaElement>(null);
  const mentions = useRef<DraftMention[]>([]);
  const picker = useSignal<{ at: number; query: string } | undefined>(undefined);
  const active = useSignal(0);
  const readers = useSignal<RoomReader[] | undefined>(undefined);
  /** The `@` the person closed the picker on with Escape: it stays closed until another `@`. */
  const dismissedAt = useRef<number | undefined>(undefined);
  const directory = useMemo(
    () => (coreAccessToken ? new MemberDirectory(coreUrl, room, coreAccessToken) : undefined),
    [coreUrl, coreAccessToken, room.repositoryId, room.branchId],
  );
  const sends = useSignal<Send[]>([]);
  const now = useSignal(Date.now());
  const timers = useRef(new Set<ReturnType<typeof setTimeout>>());
  const bytes = new TextEncoder().encode(draft.value).length;

  useEffect(() => {
    const tick = setInterval(() => (now.value = Date.now()), 1000);
    const pending = timers.current;
    return () => {
      clearInterval(tick);
      for (const timer of pending) clearTimeout(timer);
    };
  }, []);

  const update = (key: string, change: Partial<Send> | undefined) => {
    sends.value = change === undefined ? sends.value.filter((s) => s.key !== key) : sends.value.map((s) => (s.key === key ? { ...s, ...change } : s));
  };

  const attempt = async (send: Send) => {
    update(send.key, { state: 'sending', error: undefined });
    try {
      const mentioned = send.mentions.length > 0;
      const result = await client.appendMessage(
        room,
        mentioned ? { bodyMarkdown: send.body, mentions: send.mentions } : { bodyMarkdown: send.body },
        // A person's mentions are resolved by core with her own core token (spec 5); the SDK adds `Bearer `.
        mentioned && coreAccessToken ? { idempotencyKey: send.key, coreResourceToken: coreAccessToken } : { idempotencyKey: send.key },
      );
      update(send.key, undefined);
      onSent(result.message);
    } catch (error) {
      const described = describeError(error);
      if (error instanceof ChatApiError && error.status === 429) {
        const retryAt = Date.now() + (error.retryAfter ?? 1) * 1000;
        update(send.key, { state: 'waiting', retryAt, error: described });
        const timer = setTimeout(() => {
          timers.current.delete(timer);
          void attempt(send);
        }, retryAt - Date.now());
        timers.current.add(timer);
        return;
      }
      if (error instanceof ChatApiError && error.code === 'ROOM_SEALED') onSealed();
      update(send.key, { state: 'failed', error: described });
      if (error instanceof ChatApiError && error.status === 401) onAccessLost(error);
    }
  };

  const submit = () => {
    const body = draft.value;
    if (body.trim() === '' || new TextEncoder().encode(body).length > MAX_BODY_BYTES) return;
    const send: Send = { key: newUlid(), body, mentions: mentionBindings(body, mentions.current), state: 'sending' };
    sends.value = [...sends.value, send];
    draft.value = '';
    mentions.current = [];
    picker.value = undefined;
    void attempt(send);
  };

  /** Opens, moves or closes the picker for the caret's place in the text. */
  const followCaret = (box: HTMLTextAreaElement) => {
    const query = directory && box.selectionStart === box.selectionEnd ? activeMentionQuery(box.value, box.selectionStart) : undefined;
    if (!query || query.at === dismissedAt.current) {
      if (!query) dismissedAt.current = undefined;
      picker.value = undefined;
      return;
    }
    if (picker.value?.at !== query.at || picker.value.query !== query.query) active.value = 0;
    picker.value = query;
    void directory!.readers().then((list) => (readers.value = list));
  };

  const pick = (reader: RoomReader) => {
    const box = input.current;
    const open = picker.value;
    if (!box || !open) return;
    const result = insertMention(box.value, open.at, box.selectionStart, reader, mentions.current);
    // The box is written and the caret placed at once, so the render that follows changes neither.
    box.value = result.text;
    box.setSelectionRange(result.caret, result.caret);
    draft.value = result.text;
    mentions.current = result.mentions;
    picker.value = undefined;
  };

  const suggestions = picker.value ? suggestReaders(readers.value ?? [], picker.value.query) : [];
  const activeIndex = Math.min(active.value, Math.max(0, suggestions.length - 1));

  return (
    <div class="composer">
      {sends.value.length > 0 ? (
        <ul class="sends" aria-live="polite">
          {sends.value.map((send) => (
            <li key={send.key} class={`send send-${send.state}`}>
              <span class="send-body">{send.body}</span>
              {send.state === 'sending' ? <span class="send-status">Sending…</span> : null}
              {send.state === 'waiting' ? (
                <span class="send-status" role="status">
                  {send.error?.text} Sending again in {Math.max(0, Math.ceil(((send.retryAt ?? 0) - now.value) / 1000))} s.
                </span>
              ) : null}
              {send.state === 'failed' ? (
                <span class="send-status" role="alert">
                  {send.error?.text} {send.error?.detail ? <small class="error-detail">{send.error.detail}</small> : null}
                  <button type="button" onClick={() => void attempt(send)}>
                    Retry
                  </button>
                  <button type="button" onClick={() => update(send.key, undefined)}>
                    Discard
                  </button>
                </span>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {picker.value ? <MentionPicker id={PICKER_ID} suggestions={suggestions} active={activeIndex} loading={readers.value === undefined} onPick={pick} /> : null}
      <form
        class="compose-form"
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <label class="sr-only" for="composer-input">
          Message (Markdown)
        </label>
        <textarea
          id="composer-input"
          ref={input}
          rows={2}
          placeholder="Write a message in Markdown — @ mentions someone, Enter sends, Shift+Enter for a new line"
          aria-autocomplete="list"
          aria-haspopup="listbox"
          aria-controls={picker.value ? PICKER_ID : undefined}
          aria-activedescendant={picker.value && suggestions.length > 0 ? optionId(PICKER_ID, activeIndex) : undefined}
          value={draft.value}
          onInput={(event) => {
            const box = event.currentTarget;
            mentions.current = carryMentions(draft.value, box.value, mentions.current);
            draft.value = box.value;
            followCaret(box);
          }}
          onClick={(event) => followCaret(event.currentTarget)}
          onKeyUp={(event) => {
            if (['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(event.key)) followCaret(event.currentTarget);
          }}
          onBlur={() => (picker.value = undefined)}
          onKeyDown={(event) => {
            if (picker.value && !event.isComposing) {
              if (event.key === 'Escape') {
                event.preventDefault();
                dismissedAt.current = picker.value.at;
                picker.value = undefined;
                return;
              }
              const chosen = suggestions[activeIndex];
              if (chosen && (event.key === 'ArrowDown' || event.key === 'ArrowUp')) {
                event.preventDefault();
                active.value = (activeIndex + (event.key === 'ArrowDown' ? 1 : suggestions.length - 1)) % suggestions.length;
                return;
              }
              if (chosen && (event.key === 'Tab' || (event.key === 'Enter' && !event.shiftKey))) {
                event.preventDefault();
                pick(chosen);
                return;
              }
            }
            if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
              event.preventDefault();
              submit();
            }
          }}
        />
        <button type="submit" disabled={draft.value.trim() === '' || bytes > MAX_BODY_BYTES}>
          Send
        </button>
      </form>
      {bytes > MAX_BODY_BYTES - 1024 ? (
        <p class={`byte-count${bytes > MAX_BODY_BYTES ? ' over' : ''}`}>
          {bytes.toLocaleString()} / {MAX_BODY_BYTES.toLocaleString()} bytes
        </p>
      ) : null}
    </div>
  );
}
