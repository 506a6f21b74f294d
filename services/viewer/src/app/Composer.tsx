import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { ChatApiError, newUlid, type ChatClient, type MessageResponse, type RoomRef } from '@chat/client';
import { describeError } from './error-text.ts';

const MAX_BODY_BYTES = 16_384;

/** One logical send: its Idempotency-Key is made once and reused by every retry of it. */
interface Send {
  key: string;
  body: string;
  state: 'sending' | 'waiting' | 'failed';
  /** When a rate-limited send goes out again (ms since the epoch). */
  retryAt?: number;
  error?: { text: string; detail: string | undefined };
}

interface Props {
  client: ChatClient;
  room: RoomRef;
  onSent(message: MessageResponse): void;
  onSealed(): void;
  /** Chat no longer takes this sign-in (401). */
  onAccessLost(error: Error): void;
}

/** Writes Markdown messages; Enter sends, Shift+Enter makes a new line. */
export function Composer({ client, room, onSent, onSealed, onAccessLost }: Props) {
  const draft = useSignal('');
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
      const result = await client.appendMessage(room, { bodyMarkdown: send.body }, { idempotencyKey: send.key });
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
    const send: Send = { key: newUlid(), body, state: 'sending' };
    sends.value = [...sends.value, send];
    draft.value = '';
    void attempt(send);
  };

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
          rows={2}
          placeholder="Write a message in Markdown — Enter sends, Shift+Enter for a new line"
          value={draft.value}
          onInput={(event) => (draft.value = (event.target as HTMLTextAreaElement).value)}
          onKeyDown={(event) => {
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
