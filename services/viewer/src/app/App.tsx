import { signal, useSignal } from '@preact/signals';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import type { NotificationResponse } from '@chat/client';
import { createChatClient } from './chat.ts';
import { loadConfig, type ViewerConfig } from './config.ts';
import { describeError } from './error-text.ts';
import { InboxFeed } from './inbox-feed.ts';
import { InboxPanel } from './InboxPanel.tsx';
import { RoomView } from './RoomView.tsx';
import { currentHash, navigate, parseHash, roomHash } from './route.ts';
import { beginSignIn, completeSignIn, currentSession, isCallback, signOut, type ReturnPosition, type Session } from './session.ts';
import { SignIn } from './SignIn.tsx';

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

  const route = parseHash(currentHash.value);
  const defaultRoom = config.value?.rooms[0];
  useEffect(() => {
    if (session && !route.room && defaultRoom) history.replaceState(null, '', roomHash(defaultRoom)), (currentHash.value = location.hash);
  }, [session, route.room, defaultRoom]);
  useEffect(() => {
    if (route.messageId) focus.value = { messageId: route.messageId };
  }, [route.messageId]);

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

  if (current.kind === 'starting') return <p class="starting">Starting…</p>;
  if (current.kind === 'broken') return <p class="error" role="alert">{current.text}</p>;
  if (current.kind === 'sign-in' || !client || !config.value) return <SignIn notice={current.kind === 'sign-in' ? current.notice : undefined} busy={busy.value} onSignIn={signIn} />;

  const jump = (n: NotificationResponse) => {
    if (matchMedia('(max-width: 720px)').matches) inboxOpen.value = false;
    focus.value = { messageId: n.messageId };
    navigate(roomHash({ repositoryId: n.repositoryId, branchId: n.branchId ?? null }, n.messageId));
  };
  const unreadCount = inbox?.unread.value.length ?? 0;

  return (
    <div class="app">
      <a class="skip-link" href="#composer-input">
        Skip to the message box
      </a>
      <header class="top">
        <h1>Repository chat</h1>
        <button type="button" class="inbox-toggle" aria-expanded={inboxOpen.value} onClick={() => (inboxOpen.value = !inboxOpen.value)}>
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
        <nav class="rooms" aria-label="Rooms">
          <ul>
            {config.value.rooms.map((r) => {
              const hash = roomHash({ repositoryId: r.repositoryId, branchId: r.branchId ?? null });
              const active = route.room && roomHash(route.room) === hash;
              return (
                <li key={hash}>
                  <a href={hash} aria-current={active ? 'page' : undefined}>
                    {r.label}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
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
              focus={focus.value}
              announce={announce}
              onAccessLost={onAccessLost}
              registerPosition={(read) => (positionReader.current = read)}
            />
          ) : (
            <p class="empty">Open a room from the list.</p>
          )}
        </main>
        {inboxOpen.value && inbox ? <InboxPanel feed={inbox} onJump={jump} onClose={() => (inboxOpen.value = false)} /> : null}
      </div>
      <div class="sr-only" aria-live="polite" aria-atomic="true">
        {announcement.value}
      </div>
    </div>
  );
}
