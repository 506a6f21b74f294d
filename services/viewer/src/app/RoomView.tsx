import { useSignal } from '@preact/signals';
import { useEffect, useLayoutEffect, useMemo, useRef } from 'preact/hooks';
import type { ChatClient, MessageResponse, RoomRef, StreamStatus } from '@chat/client';
import { CommitResolver, coreCommitLookup } from './commit-links.ts';
import { Composer } from './Composer.tsx';
import { roomTitleText } from './core-rooms.ts';
import { commitUrl, type ViewerConfig } from './config.ts';
import { describeError } from './error-text.ts';
import { MessageItem } from './MessageItem.tsx';
import { RoomTimeline, type TimelineTarget } from './room-timeline.ts';
import { messageHash } from './route.ts';
import type { ReturnPosition } from './session.ts';
import type { SeenPositions } from './unread.ts';

interface Props {
  config: ViewerConfig;
  client: ChatClient;
  coreAccessToken: string | undefined;
  /** The signed-in person, whose mentions are marked more strongly. */
  userId: string;
  room: RoomRef;
  /** The room's names from core's list, for its header. */
  title: { repository: string; branch: string | undefined };
  /** Where the person last was in each room: the divider is placed by it, and moved on by what is on screen. */
  seen: SeenPositions | undefined;
  /** A message to show (a jump from the inbox or an address), or a position to restore after sign-in. */
  focus: { messageId?: string | undefined; anchorOffset?: number | undefined } | undefined;
  /** The message the address names (a permalink or an inbox jump): the room opens around it. */
  link: TimelineTarget | undefined;
  announce(text: string): void;
  onAccessLost(error: Error): void;
  /** Registers how to read this view's position, for a sign-in that must come back to it. */
  registerPosition(read: (() => Omit<ReturnPosition, 'hash'>) | undefined): void;
}

/** How close to the bottom (px) still counts as "following the newest message". */
const FOLLOW_SLACK_PX = 80;
/** How close to either end (px) reading the next page starts, so it is there before it is needed. */
const PAGE_AHEAD_PX = 600;

type ScrollTarget = { messageId: string; anchorOffset?: number | undefined };

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

export function RoomView({ config, client, coreAccessToken, userId, room, title: names, seen, focus, link, announce, onAccessLost, registerPosition }: Props) {
  const list = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const olderAnchor = useRef<{ id: string; top: number } | undefined>(undefined);
  const newBelow = useSignal(0);
  const highlighted = useSignal<string | undefined>(undefined);
  /** A message that is read and waits to be scrolled to. */
  const scrollTarget = useSignal<ScrollTarget | undefined>(undefined);

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
    void timeline.open(link);
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

  /** The last position seen before this opening; the "new messages" divider stays by it while the room is open. */
  const seenAtOpen = useMemo(() => seen?.get(room), [timeline]);

  /**
   * Records the newest message on screen as seen, when it is newer than the position recorded: later in
   * this run than the recorded message, or, on the run that reaches the newest message, any message
   * when the recorded one is older than the whole run.
   */
  const recordSeen = () => {
    const view = list.current;
    if (!seen || !view || timeline.phase.value !== 'ready') return;
    const shown = timeline.messages.value;
    const cursorOf = timeline.cursors.value;
    const bottom = view.getBoundingClientRect().bottom;
    let newest = -1;
    for (let i = shown.length - 1; i >= 0; i--) {
      const item = view.querySelector<HTMLElement>(`#m-${shown[i]!.messageId}`);
      if (item && item.getBoundingClientRect().top < bottom && cursorOf.has(shown[i]!.messageId)) {
        newest = i;
        break;
      }
    }
    const recorded = seen.get(room);
    if (newest < 0) {
      if (shown.length === 0 && recorded === undefined) seen.set(room, undefined);
      return;
    }
    const recordedIndex = recorded ? shown.findIndex((m) => cursorOf.get(m.messageId) === recorded) : -1;
    const newer = recordedIndex >= 0 ? newest > recordedIndex : recorded === undefined || recorded === '' || !timeline.hasNewer.value;
    if (newer) seen.set(room, cursorOf.get(shown[newest]!.messageId));
  };

  const phase = timeline.phase.value;
  const messages = timeline.messages.value;
  const cursors = timeline.cursors.value;
  const hasOlder = timeline.hasOlder.value;
  const hasNewer = timeline.hasNewer.value;

  /** Reads back until `target` is there, then has it scrolled to (and highlighted, unless it is a position to restore). */
  const show = async (target: ScrollTarget) => {
    following.current = false;
    if (await timeline.reveal(target.messageId)) scrollTarget.value = target;
  };

  // First display: the message asked for (or the position before a sign-in), else the newest message.
  const placed = useRef(false);
  useLayoutEffect(() => {
    const view = list.current;
    if (phase !== 'ready' || !view || placed.current) return;
    placed.current = true;
    const target = focus?.messageId ? focus : link;
    if (target?.messageId) void show({ messageId: target.messageId, anchorOffset: focus?.messageId ? focus.anchorOffset : undefined });
    else view.scrollTop = view.scrollHeight;
  }, [phase]);

  useEffect(() => {
    if (placed.current && focus?.messageId) void show({ messageId: focus.messageId, anchorOffset: focus.anchorOffset });
  }, [focus]);

  useLayoutEffect(() => {
    const view = list.current;
    const target = scrollTarget.value;
    if (!view || !target) return;
    const item = view.querySelector<HTMLElement>(`#m-${target.messageId}`);
    if (!item) return;
    scrollTarget.value = undefined;
    if (target.anchorOffset !== undefined) {
      view.scrollTop += item.getBoundingClientRect().top - view.getBoundingClientRect().top - target.anchorOffset;
    } else {
      item.scrollIntoView({ block: 'center' });
      highlighted.value = target.messageId;
      item.focus({ preventScroll: true });
    }
    following.current = !timeline.hasNewer.value && view.scrollHeight - view.scrollTop - view.clientHeight < FOLLOW_SLACK_PX;
  }, [scrollTarget.value, messages]);

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
  }, [messages]);

  // After the view settles on new messages (its first page, a live one, a page read), what is on screen is seen.
  useEffect(() => {
    if (phase === 'ready') recordSeen();
  }, [phase, messages, cursors]);

  /** Reads the page before the first message shown, keeping that message where it is on screen. */
  const loadOlder = () => {
    const first = messages[0];
    if (!timeline.hasOlder.value || timeline.loadingOlder.value) return;
    if (first && list.current) {
      const item = list.current.querySelector<HTMLElement>(`#m-${first.messageId}`);
      if (item) olderAnchor.current = { id: first.messageId, top: item.getBoundingClientRect().top };
    }
    void timeline.loadOlder();
  };

  // A first page shorter than the view gives nothing to scroll: the next one is read at once.
  useLayoutEffect(() => {
    const view = list.current;
    if (view && phase === 'ready' && hasOlder && !scrollTarget.value && view.scrollHeight <= view.clientHeight + PAGE_AHEAD_PX / 2) loadOlder();
  }, [phase, messages, hasOlder]);

  const copyLink = (url: string) => {
    void navigator.clipboard.writeText(url).then(
      () => announce('Link to the message copied'),
      () => announce('The link could not be copied: open the message menu of your browser on "link" to copy it'),
    );
  };

  const roomInfo = timeline.room.value;
  const sealed = roomInfo?.state === 'sealed';
  // On a permalink's page the stream waits until the newest message is read.
  const connection = hasNewer ? { text: 'Earlier history', tone: 'pending' } : connectionText(timeline.connection.value);
  const failure = timeline.failure.value;
  const title = roomTitleText(names);
  // The divider goes above the first message after the one last seen; a room seen empty has all unread.
  const seenIndex = seenAtOpen ? messages.findIndex((m) => cursors.get(m.messageId) === seenAtOpen) : -1;
  const firstUnread = seenAtOpen === '' ? messages[0]?.messageId : seenIndex >= 0 ? messages[seenIndex + 1]?.messageId : undefined;

  return (
    <section class="room" aria-labelledby="room-title">
      <header class="room-head">
        <h2 id="room-title">
          {title}
        </h2>
        <span class="room-kind">{names.branch === undefined ? 'repository room' : 'branch room'}</span>
        {sealed ? <span class="badge badge-sealed">Sealed · read-only</span> : null}
        <span class={`badge connection connection-${connection.tone}`} role="status" data-state={hasNewer ? 'history' : (timeline.connection.value?.state ?? 'connecting')}>
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
          const below = view.scrollHeight - view.scrollTop - view.clientHeight;
          following.current = !timeline.hasNewer.value && below < FOLLOW_SLACK_PX;
          if (following.current) newBelow.value = 0;
          recordSeen();
          if (view.scrollTop < PAGE_AHEAD_PX) loadOlder();
          if (below < PAGE_AHEAD_PX) void timeline.loadNewer();
        }}
      >
        {phase === 'loading' ? <p class="loading">Loading messages…</p> : null}
        {phase === 'ready' && hasOlder ? (
          // Not disabled while a page is read: a second press is simply nothing, and focus stays on the button.
          <button type="button" class="load-older" onClick={loadOlder} aria-busy={timeline.loadingOlder.value}>
            {timeline.loadingOlder.value ? 'Loading older messages…' : 'Load older messages'}
          </button>
        ) : null}
        {phase === 'ready' && messages.length === 0 ? <p class="empty">No messages yet.</p> : null}
        <ol class="messages">
          {/* One flat list of keyed items. Nested arrays would each become an unkeyed fragment, matched by
              position: a page read above then unmounted and mounted again every message already shown,
              so each page cost more than the one before. */}
          {messages.flatMap((message) => {
            const item = (
              <MessageItem key={message.messageId} message={message} resolver={resolver} commitHref={commitHref} highlighted={highlighted.value === message.messageId}
                permalink={`${location.origin}/${messageHash(room, message.messageId, cursors.get(message.messageId))}`}
                onCopyLink={copyLink} selfId={userId} />
            );
            return message.messageId === firstUnread
              ? [
                  <li key="new-messages" class="new-messages" role="separator" aria-label="New messages">
                    New messages
                  </li>,
                  item,
                ]
              : [item];
          })}
        </ol>
      </div>
      {hasNewer ? (
        <button
          type="button"
          class="new-below"
          onClick={() => {
            following.current = true;
            highlighted.value = undefined;
            void timeline.jumpToLatest();
          }}
        >
          Jump to latest
        </button>
      ) : newBelow.value > 0 ? (
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
        <Composer client={client} room={room} coreUrl={config.coreUrl} coreAccessToken={coreAccessToken} onSent={(message) => (timeline.hasNewer.value ? void timeline.jumpToLatest() : timeline.add(message, false))} onSealed={() => timeline.markSealed()} onAccessLost={onAccessLost} />
      ) : null}
    </section>
  );
}
