import { signal, useSignal } from '@preact/signals';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import type { NotificationResponse, SearchResult } from '@chat/client';
import { createChatClient } from './chat.ts';
import { loadConfig, type ViewerConfig } from './config.ts';
import { configuredRepositories, fetchCoreRepositories, landingRoom, resolveBranchHash, roomsOf, roomTitle, type CoreRepository } from './core-rooms.ts';
import { describeError } from './error-text.ts';
import { InboxFeed } from './inbox-feed.ts';
import { InboxPanel } from './InboxPanel.tsx';
import { MessageSearch } from './message-search.ts';
import { RoomList } from './RoomList.tsx';
import { RoomView } from './RoomView.tsx';
import { currentHash, messageHash, navigate, parseBranchNameHash, parseHash, roomHash } from './route.ts';
import { beginSignIn, completeSignIn, currentSession, isCallback, signOut, type ReturnPosition, type Session } from './session.ts';
import { SearchBox } from './SearchBox.tsx';
import { SearchPanel } from './SearchPanel.tsx';
import { SignIn } from './SignIn.tsx';
import { SeenPositions, UnreadCounts } from './unread.ts';

type Screen = { kind: 'starting' } | { kind: 'sign-in'; notice?: string | undefined } | { kind: 'signed-in'; session: Session } | { kind: 'broken'; text: string };

const REAUTHORIZED_AT_KEY = 'chat-viewer.reauthorized-at';
/** A second automatic sign-in this soon after the last one means fresh authority is not coming. */
const REAUTHORIZE_GUARD_MS = 60_000;

const announcement = signal('');
function announce(text: string): void {
  announcement.value = text;
}

export function App() {
  const config = useSignal<ViewerConfig | undefined>(undefined);
  const screen = useSignal<Screen>({ kind: 'starting' });
  const busy = useSignal(false);
  const focus = useSignal<{ messageId?: string | undefined; anchorOffset?: number | undefined } | undefined>(undefined);
  const inboxOpen = useSignal(false);
  /** The rooms of the list: core's, or the configured ones when core's cannot be read; undefined while read. */
  const repositories = useSignal<CoreRepository[] | undefined>(undefined);
  const unresolvedBranch = useSignal<string | undefined>(undefined);
  const positionReader = useRef<(() => Omit<ReturnPosition, 'hash'>) | undefined>(undefined);
  const savedPosition = useRef<ReturnPosition | undefined>(undefined);

  const position = (): ReturnPosition => savedPosition.current ?? { hash: location.hash, ...(positionReader.current?.() ?? {}) };

  useEffect(() => {
    void (async () => {
      try {
        const loaded = await loadConfig();
        // The session lives in this origin's storage, and the callback is registered on one origin.
        const origin = new URL(loaded.redirectUri).origin;
        if (location.origin !== origin) {
          location.replace(origin + location.pathname + location.search + location.hash);
          return;
        }
        config.value = loaded;
        if (isCallback(loaded)) {
          try {
            const { session, returnTo } = await completeSignIn(loaded);
            currentHash.value = location.hash;
            if (returnTo.anchorMessageId) focus.value = { messageId: returnTo.anchorMessageId, anchorOffset: returnTo.anchorOffset };
            screen.value = { kind: 'signed-in', session };
          } catch (error) {
            screen.value = { kind: 'sign-in', notice: (error as Error).message };
          }
          return;
        }
        const session = currentSession();
        screen.value = session ? { kind: 'signed-in', session } : { kind: 'sign-in' };
      } catch (error) {
        screen.value = { kind: 'broken', text: `The viewer could not start: ${(error as Error).message}` };
      }
    })();
  }, []);

  const signIn = () => {
    if (!config.value) return;
    busy.value = true;
    void beginSignIn(config.value, position());
  };

  const current = screen.value;
  const session = current.kind === 'signed-in' ? current.session : undefined;

  const client = useMemo(() => {
    if (!session || !config.value) return undefined;
    const reauthorize = (): Promise<never> => {
      const last = Number(sessionStorage.getItem(REAUTHORIZED_AT_KEY) ?? 0);
      if (Date.now() - last < REAUTHORIZE_GUARD_MS) return Promise.reject(new Error('fresh authority is not available'));
      sessionStorage.setItem(REAUTHORIZED_AT_KEY, String(Date.now()));
      return beginSignIn(config.value!, position());
    };
    return createChatClient(config.value, session, reauthorize);
  }, [session, config.value]);

  useEffect(() => {
    repositories.value = undefined;
    if (!session || !config.value) return;
    const fallback = configuredRepositories(config.value.rooms);
    if (!session.coreAccessToken) {
      repositories.value = fallback;
      return;
    }
    let current = true;
    fetchCoreRepositories(config.value.coreUrl, session.coreAccessToken).then(
      (listed) => current && (repositories.value = listed),
      () => current && (repositories.value = fallback),
    );
    return () => void (current = false);
  }, [session, config.value]);

  // A branch named in the address (`#/r/<id>/branch/<name>`) opens by the ID core resolves it to.
  const named = parseBranchNameHash(currentHash.value);
  useEffect(() => {
    unresolvedBranch.value = undefined;
    if (!named || !session || !config.value) return;
    if (!session.coreAccessToken) {
      unresolvedBranch.value = named.name;
      return;
    }
    const asked = currentHash.value;
    void resolveBranchHash(config.value.coreUrl, session.coreAccessToken, named.repositoryId, named.name).then((hash) => {
      if (location.hash !== asked) return;
      if (hash) history.replaceState(null, '', hash), (currentHash.value = location.hash);
      else unresolvedBranch.value = named.name;
    });
  }, [session, currentHash.value]);

  const route = parseHash(currentHash.value);
  const defaultRoom = repositories.value ? landingRoom(repositories.value) : undefined;
  useEffect(() => {
    if (session && !route.room && !named && defaultRoom) history.replaceState(null, '', roomHash(defaultRoom)), (currentHash.value = location.hash);
  }, [session, route.room, defaultRoom?.repositoryId]);

  const unread = useMemo(() => (client && session ? new UnreadCounts(client, new SeenPositions(session.userId)) : undefined), [client]);
  useEffect(() => () => unread?.close(), [unread]);
  useEffect(() => {
    if (unread && repositories.value) unread.watch(roomsOf(repositories.value), route.room);
  }, [unread, repositories.value, route.room ? roomHash(route.room) : '']);
  const roomKey = route.room ? roomHash(route.room) : undefined;
  const lastAddress = useRef<{ room?: string | undefined; messageId?: string | undefined }>({});
  useEffect(() => {
    const last = lastAddress.current;
    lastAddress.current = { room: roomKey, messageId: route.messageId };
    if (route.messageId) focus.value = { messageId: route.messageId };
    // A message to show belongs to the address that named it, and a position restored after a
    // sign-in to its room: leaving either drops it, or the next room would look for it page by page.
    else if ((last.room !== undefined && last.room !== roomKey) || last.messageId !== undefined) focus.value = undefined;
  }, [roomKey, route.messageId]);

  // Chat refused this sign-in (401: expired, revoked, or not a token it takes; or 403 on reading the
  // room): the tab's session is dropped and the person is back at sign-in, which returns here.
  const onAccessLost = (error: Error) => {
    if (screen.value.kind !== 'signed-in') return;
    savedPosition.current = position();
    signOut();
    screen.value = { kind: 'sign-in', notice: `${describeError(error).text} Sign in again to continue where you were.` };
  };

  const repositoryId = route.room?.repositoryId;
  const inbox = useMemo(
    () =>
      client && repositoryId
        ? new InboxFeed(client, repositoryId, { onNotification: (n: NotificationResponse) => announce(`New mention from ${n.senderId}`), onAccessLost })
        : undefined,
    [client, repositoryId],
  );
  useEffect(() => {
    if (!inbox) return;
    inbox.refresh().catch((error: unknown) => inbox.failed(error));
    return () => inbox.close();
  }, [inbox]);
  const search = useMemo(() => (client && repositoryId ? new MessageSearch(client, repositoryId, { onAccessLost }) : undefined), [client, repositoryId]);

  if (current.kind === 'starting') return <p class="starting">Starting…</p>;
  if (current.kind === 'broken') return <p class="error" role="alert">{current.text}</p>;
  if (current.kind === 'sign-in' || !client || !config.value) return <SignIn notice={current.kind === 'sign-in' ? current.notice : undefined} busy={busy.value} onSignIn={signIn} />;

  const jump = (n: NotificationResponse) => {
    if (matchMedia('(max-width: 720px)').matches) inboxOpen.value = false;
    focus.value = { messageId: n.messageId };
    navigate(roomHash({ repositoryId: n.repositoryId, branchId: n.branchId ?? null }, n.messageId));
  };
  // A result opens its room at the message, read around its cursor however far back it is.
  const openResult = (result: SearchResult) => {
    if (matchMedia('(max-width: 720px)').matches) search?.clear();
    focus.value = { messageId: result.message.messageId };
    navigate(messageHash({ repositoryId: result.message.repositoryId, branchId: result.branchId ?? null }, result.message.messageId, result.cursor));
  };
  const unreadCount = inbox?.unread.value.length ?? 0;

  return (
    <div class="app">
      <a class="skip-link" href="#composer-input">
        Skip to the message box
      </a>
      <header class="top">
        <h1>Repository chat</h1>
        {search ? (
          <SearchBox
            room={route.room}
            onSearch={(request) => {
              inboxOpen.value = false;
              void search.run(request);
            }}
          />
        ) : null}
        <button
          type="button"
          class="inbox-toggle"
          aria-expanded={inboxOpen.value}
          onClick={() => {
            inboxOpen.value = !inboxOpen.value;
            if (inboxOpen.value) search?.clear();
          }}
        >
          Inbox <span class="count" aria-label={`${unreadCount} unread`}>{unreadCount}</span>
        </button>
        <span class="user" title="Signed in as">
          {current.session.userId}
        </span>
        <button
          type="button"
          onClick={() => {
            signOut();
            screen.value = { kind: 'sign-in', notice: 'You signed out.' };
          }}
        >
          Sign out
        </button>
      </header>
      <div class="layout">
        <RoomList repositories={repositories.value} open={route.room} unread={unread?.counts.value ?? new Map()} />
        <main id="main" class="main">
          {route.room ? (
            <RoomView
              // A permalink (or an inbox jump) opens the room afresh around its message.
              key={`${roomHash(route.room)} ${route.messageId ?? ''}`}
              link={route.messageId ? { messageId: route.messageId, cursor: route.cursor } : undefined}
              config={config.value}
              client={client}
              coreAccessToken={current.session.coreAccessToken}
              userId={current.session.userId}
              room={route.room}
              title={roomTitle(repositories.value, route.room)}
              seen={unread?.seen}
              focus={focus.value}
              announce={announce}
              onAccessLost={onAccessLost}
              registerPosition={(read) => (positionReader.current = read)}
            />
          ) : unresolvedBranch.value !== undefined ? (
            <p class="empty" role="alert">
              Core knows no branch named “{unresolvedBranch.value}” in this repository that you can read.
            </p>
          ) : named ? (
            <p class="loading">Finding the branch…</p>
          ) : (
            <p class="empty">Open a room from the list.</p>
          )}
        </main>
        {inboxOpen.value && inbox ? <InboxPanel feed={inbox} onJump={jump} onClose={() => (inboxOpen.value = false)} /> : null}
        {search ? <SearchPanel search={search} repositories={repositories.value} onOpen={openResult} onClose={() => search.clear()} /> : null}
      </div>
      <div class="sr-only" aria-live="polite" aria-atomic="true">
        {announcement.value}
      </div>
    </div>
  );
}
