import { useSignal } from '@preact/signals';
import { useEffect, useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import type { ChatClient, MessageResponse, RoomRef, StreamStatus } from '@chat/client';
import { CommitResolver, coreCommitLookup } from './commit-links.ts';
import { Composer } from './Composer.tsx';
import { commitUrl, type ViewerConfig } from './config.ts';
import { describeError } from './error-text.ts';
import { MessageItem } from './MessageItem.tsx';
import { RoomTimeline } from './room-timeline.ts';
import type { ReturnPosition } from './session.ts';

interface Props {
  config: ViewerConfig;
  client: ChatClient;
  coreAccessToken: string | undefined;
  /** The signed-in person, whose mentions are marked more strongly. */
  userId: string;
  room: RoomRef;
  /** A message to show (a jump from the inbox or an address), or a position to restore after sign-in. */
  focus: { messageId?: string | undefined; anchorOffset?: number | undefined } | undefined;
  announce(text: string): void;
  onAccessLost(error: Error): void;
  /** Registers how to read this view's position, for a sign-in that must come back to it. */
  registerPosition(read: (() => Omit<ReturnPosition, 'hash'>) | undefined): void;
}

/** How close to the bottom (px) still counts as "following the newest message". */
const FOLLOW_SLACK_PX = 80;

function connectionText(status: StreamStatus | undefined): { text: string; tone: string } {
  if (!status) return { text: 'Connecting…', tone: 'pending' };
  switch (status.state) {
    case 'open':
      return { text: 'Live', tone: 'ok' };
    case 'connecting':
      return { text: status.attempt > 0 ? 'Reconnecting…' : 'Connecting…', tone: 'pending' };
    case 'backoff':
      return { text: `Reconnecting in ${Math.ceil((status.delayMs ?? 0) / 1000)} s`, tone: 'warn' };
    default:
      return { text: 'Not live', tone: 'bad' };
  }
}

export function RoomView({ config, client, coreAccessToken, userId, room, focus, announce, onAccessLost, registerPosition }: Props) {
  const list = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const olderAnchor = useRef<{ id: string; top: number } | undefined>(undefined);
  const newBelow = useSignal(0);
  const highlighted = useSignal<string | undefined>(undefined);

  const timeline = useMemo(
    () =>
      new RoomTimeline(client, room, {
        onLive: (message: MessageResponse) => {
          announce(`New message from ${message.senderId}: ${message.bodyMarkdown.slice(0, 140)}`);
          if (!following.current) newBelow.value++;
        },
        onAccessLost,
      }),
    [client, room.repositoryId, room.branchId],
  );
  const resolver = useMemo(
    () => (coreAccessToken ? new CommitResolver(coreCommitLookup(config.coreUrl, room.repositoryId, coreAccessToken)) : undefined),
    [coreAccessToken, room.repositoryId],
  );
  const commitHref = useMemo(() => (sha: string) => commitUrl(config, room.repositoryId, sha), [config, room.repositoryId]);

  useEffect(() => {
    void timeline.open();
    return () => timeline.close();
  }, [timeline]);

  useEffect(() => {
    registerPosition(() => {
      const view = list.current;
      if (!view) return {};
      const top = view.getBoundingClientRect().top;
      for (const item of view.querySelectorAll<HTMLElement>('li.message')) {
        const box = item.getBoundingClientRect();
        if (box.bottom > top) return { anchorMessageId: item.dataset.messageId, anchorOffset: box.top - top };
      }
      return {};
    });
    return () => registerPosition(undefined);
  }, [timeline]);

  const phase = timeline.phase.value;
  const messages = timeline.messages.value;
  const start = timeline.windowStart.value;

  // First display: the newest message, or the message asked for, or the position before a sign-in.
  const placed = useRef(false);
  useLayoutEffect(() => {
    const view = list.current;
    if (phase !== 'ready' || !view || placed.current) return;
    placed.current = true;
    if (focus?.messageId && timeline.reveal(focus.messageId)) return;
    view.scrollTop = view.scrollHeight;
  }, [phase]);

  useLayoutEffect(() => {
    const view = list.current;
    if (!view || !focus?.messageId || phase !== 'ready') return;
    const item = view.querySelector<HTMLElement>(`#m-${focus.messageId}`);
    if (!item) {
      timeline.reveal(focus.messageId);
      return;
    }
    if (focus.anchorOffset !== undefined) {
      view.scrollTop += item.getBoundingClientRect().top - view.getBoundingClientRect().top - focus.anchorOffset;
    } else {
      item.scrollIntoView({ block: 'center' });
      highlighted.value = focus.messageId;
      item.focus({ preventScroll: true });
    }
    following.current = view.scrollHeight - view.scrollTop - view.clientHeight < FOLLOW_SLACK_PX;
  }, [focus, phase, start]);

  // New messages keep the view at the bottom when it was there; older ones keep the reader's place.
  useLayoutEffect(() => {
    const view = list.current;
    if (!view) return;
    const anchor = olderAnchor.current;
    if (anchor) {
      olderAnchor.current = undefined;
      const item = view.querySelector<HTMLElement>(`#m-${anchor.id}`);
      if (item) view.scrollTop += item.getBoundingClientRect().top - anchor.top;
      return;
    }
    if (following.current) view.scrollTop = view.scrollHeight;
  }, [messages, start]);

  const loadOlder = () => {
    const first = messages[start];
    if (first && list.current) {
      const item = list.current.querySelector<HTMLElement>(`#m-${first.messageId}`);
      if (item) olderAnchor.current = { id: first.messageId, top: item.getBoundingClientRect().top };
    }
    timeline.loadOlder();
  };

  const roomInfo = timeline.room.value;
  const sealed = roomInfo?.state === 'sealed';
  const connection = connectionText(timeline.connection.value);
  const failure = timeline.failure.value;
  const title = room.branchId ? `Branch room ${room.branchId}` : `Repository room ${room.repositoryId}`;

  return (
    <section class="room" aria-labelledby="room-title">
      <header class="room-head">
        <h2 id="room-title">{title}</h2>
        {sealed ? <span class="badge badge-sealed">Sealed · read-only</span> : null}
        <span class={`badge connection connection-${connection.tone}`} role="status" data-state={timeline.connection.value?.state ?? 'connecting'}>
          {connection.text}
        </span>
      </header>
      {failure ? (
        <div class="error" role="alert">
          {describeError(failure).text} <small class="error-detail">{describeError(failure).detail}</small>
          {phase === 'ready' && timeline.connection.value?.state === 'closed' ? (
            <button type="button" onClick={() => void timeline.follow()}>
              Reconnect
            </button>
          ) : null}
        </div>
      ) : null}
      <div
        class="timeline"
        ref={list}
        tabIndex={0}
        aria-label="Messages"
        aria-busy={phase === 'loading'}
        onScroll={(event) => {
          const view = event.currentTarget as HTMLDivElement;
          following.current = view.scrollHeight - view.scrollTop - view.clientHeight < FOLLOW_SLACK_PX;
          if (following.current) newBelow.value = 0;
        }}
      >
        {phase === 'loading' ? <p class="loading">Loading history… {timeline.loadedCount.value.toLocaleString()} of {timeline.expectedCount.value.toLocaleString()} messages</p> : null}
        {phase === 'ready' && start > 0 ? (
          <button type="button" class="load-older" onClick={loadOlder}>
            Load older messages ({start.toLocaleString()} more)
          </button>
        ) : null}
        {phase === 'ready' && messages.length === 0 ? <p class="empty">No messages yet.</p> : null}
        <ol class="messages">
          {messages.slice(start).map((message) => (
            <MessageItem key={message.messageId} message={message} resolver={resolver} commitHref={commitHref} highlighted={highlighted.value === message.messageId} selfId={userId} />
          ))}
        </ol>
      </div>
      {newBelow.value > 0 ? (
        <button
          type="button"
          class="new-below"
          onClick={() => {
            const view = list.current;
            if (view) view.scrollTop = view.scrollHeight;
            following.current = true;
            newBelow.value = 0;
          }}
        >
          {newBelow.value} new {newBelow.value === 1 ? 'message' : 'messages'} below
        </button>
      ) : null}
      {sealed ? (
        <p class="sealed-note">This room is sealed: it stays readable, and no one can write to it.</p>
      ) : roomInfo ? (
        <Composer client={client} room={room} coreUrl={config.coreUrl} coreAccessToken={coreAccessToken} onSent={(message) => timeline.add(message, false)} onSealed={() => timeline.markSealed()} onAccessLost={onAccessLost} />
      ) : null}
    </section>
  );
}
