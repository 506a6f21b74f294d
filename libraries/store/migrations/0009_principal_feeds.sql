-- The principal feed: every notification of a principal, across all its repositories, numbered by a
-- contiguous per-principal sequence `feed_seq` besides its per-inbox `seq`.

-- One feed per principal, keyed `feed:<principalKind>:<principalId>` (also its backbone scope key and
-- the string its cursors are bound to). An append locks this row after its inbox row, so feed_seq is
-- contiguous and follows commit order across the principal's inboxes.
CREATE TABLE IF NOT EXISTS principal_feeds (
  feed_key text PRIMARY KEY,
  principal_kind text NOT NULL CHECK (principal_kind IN ('human', 'bot')),
  principal_id text NOT NULL,
  last_seq bigint NOT NULL DEFAULT 0,
  -- The acknowledged checkpoint: notifications with feed_seq <= ack_seq are acknowledged; 0 means none.
  ack_seq bigint NOT NULL DEFAULT 0 CHECK (ack_seq >= 0 AND ack_seq <= last_seq)
);

-- NULL only on a notification that a release without the feed wrote during a rollout: it stays in
-- its inbox and is not in the feed.
ALTER TABLE notifications ADD COLUMN IF NOT EXISTS feed_seq bigint;

-- A principal's feed in order: target_kind and target_id are the principal's kind and id. Unique, so
-- two notifications never share a feed position.
CREATE UNIQUE INDEX IF NOT EXISTS notifications_feed_idx ON notifications (target_kind, target_id, feed_seq);

-- Existing notifications join their principal's feed in (created_at, notification_id) order, the
-- order each inbox already has, so a principal's feed holds its history.
UPDATE notifications n SET feed_seq = numbered.feed_seq
FROM (
  SELECT notification_id, row_number() OVER (PARTITION BY target_kind, target_id ORDER BY created_at, notification_id) AS feed_seq
  FROM notifications
) numbered
WHERE n.notification_id = numbered.notification_id AND n.feed_seq IS NULL;

-- Each feed's checkpoint is the longest prefix its inboxes' checkpoints already acknowledge, so a
-- client that starts on the feed is not handed again what it acknowledged per repository.
INSERT INTO principal_feeds (feed_key, principal_kind, principal_id, last_seq, ack_seq)
SELECT 'feed:' || n.target_kind || ':' || n.target_id, n.target_kind, n.target_id, max(n.feed_seq),
  coalesce(min(n.feed_seq) FILTER (WHERE n.seq > i.ack_seq) - 1, max(n.feed_seq))
FROM notifications n JOIN inboxes i ON i.inbox_key = n.inbox_key
GROUP BY n.target_kind, n.target_id
ON CONFLICT (feed_key) DO NOTHING;
