import type { NotificationResponse } from '@chat/client';
import type { InboxFeed } from './inbox-feed.ts';
import { roomHash } from './route.ts';

interface Props {
  feed: InboxFeed;
  onJump(notification: NotificationResponse): void;
  onClose(): void;
}

const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });

/** The unread mentions of the current repository, oldest first, each a way to its message. */
export function InboxPanel({ feed, onJump, onClose }: Props) {
  const unread = feed.unread.value;
  return (
    <aside class="inbox" aria-labelledby="inbox-title">
      <header class="inbox-head">
        <h2 id="inbox-title">Inbox ({unread.length} unread)</h2>
        <button type="button" onClick={onClose} aria-label="Close the inbox">
          Close
        </button>
      </header>
      {feed.notice.value ? (
        <p class="notice" role="status">
          {feed.notice.value}
        </p>
      ) : null}
      {unread.length === 0 ? <p class="empty">No unread mentions.</p> : null}
      <ol class="notifications">
        {unread.map((n) => (
          <li key={n.notificationId} class="notification" data-notification-id={n.notificationId}>
            <a
              href={roomHash({ repositoryId: n.repositoryId, branchId: n.branchId ?? null }, n.messageId)}
              onClick={(event) => {
                event.preventDefault();
                onJump(n);
              }}
            >
              <strong>{n.senderId}</strong> mentioned you{n.branchId ? ' in a branch room' : ''} · <time dateTime={n.createdAt}>{when.format(new Date(n.createdAt))}</time>
            </a>
            <button type="button" class="ack" onClick={() => void feed.acknowledgeThrough(n)} aria-label={`Mark read through this mention from ${n.senderId}`}>
              Mark read
            </button>
          </li>
        ))}
      </ol>
    </aside>
  );
}
