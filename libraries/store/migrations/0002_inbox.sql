-- Mention inboxes, their notifications, and the durable record of mentions still to fan out.

-- One inbox per (repository, principal). Appends lock this row, exactly as message appends lock the
-- room row, so the per-inbox seq is contiguous and (createdAt, notificationId) follows commit order.
CREATE TABLE IF NOT EXISTS inboxes (
  inbox_key text PRIMARY KEY,
  repository_id text NOT NULL,
  principal_kind text NOT NULL CHECK (principal_kind IN ('human', 'bot')),
  principal_id text NOT NULL,
  created_at timestamptz NOT NULL,
  last_seq bigint NOT NULL DEFAULT 0,
  last_notification_at timestamptz,
  last_notification_id text,
  -- The acknowledged checkpoint: notifications with seq <= ack_seq are acknowledged; 0 means none.
  ack_seq bigint NOT NULL DEFAULT 0 CHECK (ack_seq >= 0 AND ack_seq <= last_seq)
);

CREATE TABLE IF NOT EXISTS notifications (
  inbox_key text NOT NULL REFERENCES inboxes (inbox_key),
  seq bigint NOT NULL,
  notification_id text NOT NULL UNIQUE,
  target_kind text NOT NULL CHECK (target_kind IN ('human', 'bot')),
  target_id text NOT NULL,
  message_id text NOT NULL,
  room_id text NOT NULL,
  repository_id text NOT NULL,
  branch_id text,
  sender_kind text NOT NULL CHECK (sender_kind IN ('user', 'bot')),
  sender_id text NOT NULL,
  spans jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (inbox_key, seq)
);

-- One notification per (message, target), however often the message is fanned out again.
CREATE UNIQUE INDEX IF NOT EXISTS notifications_message_idx ON notifications (inbox_key, message_id);

-- Written in the message append transaction when the message has mentions, deleted once its
-- notifications are written. Redis is not a record: this row is what guarantees the fan-out.
CREATE TABLE IF NOT EXISTS mention_fanout (
  message_id text PRIMARY KEY,
  room_id text NOT NULL,
  seq bigint NOT NULL,
  created_at timestamptz NOT NULL,
  -- A claim is a lease: nobody else takes the row before this time; a crashed worker's claim lapses.
  next_attempt_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  -- Dead letters: given up after too many failed attempts; kept for operators.
  dead boolean NOT NULL DEFAULT false
);

CREATE INDEX IF NOT EXISTS mention_fanout_due_idx ON mention_fanout (next_attempt_at) WHERE NOT dead;
