-- Webhooks: a principal's HTTPS endpoint that receives its notifications by POST, as an alternative
-- to streaming its feed. Deliveries run in lanes, one per (webhook, inbox): a lane delivers its
-- inbox's notifications in seq order, so a receiver sees each repository's notifications in order,
-- and a lane that fails waits alone while the others go on.

CREATE TABLE IF NOT EXISTS webhooks (
  webhook_id text PRIMARY KEY,
  principal_kind text NOT NULL CHECK (principal_kind IN ('human', 'bot')),
  principal_id text NOT NULL,
  url text NOT NULL,
  -- The HMAC key of the signatures. Kept as given: signing needs the key itself, as GitHub's does.
  secret text NOT NULL,
  created_at timestamptz NOT NULL,
  -- The principal's feed position up to which notifications have been handed to lanes; a webhook
  -- starts at its feed's end when it is registered, so it receives what comes after.
  dispatched_feed_seq bigint NOT NULL DEFAULT 0
);

CREATE INDEX IF NOT EXISTS webhooks_principal_idx ON webhooks (principal_kind, principal_id, created_at);

CREATE TABLE IF NOT EXISTS webhook_lanes (
  webhook_id text NOT NULL REFERENCES webhooks (webhook_id) ON DELETE CASCADE,
  inbox_key text NOT NULL REFERENCES inboxes (inbox_key),
  repository_id text NOT NULL,
  -- Notifications of the inbox with seq <= delivered_seq are delivered or dead-lettered.
  delivered_seq bigint NOT NULL,
  -- Failed attempts at the notification after delivered_seq.
  attempts integer NOT NULL DEFAULT 0,
  -- The lane's next try; a failed head waits for it (backoff with jitter).
  next_attempt_at timestamptz NOT NULL,
  last_error text,
  PRIMARY KEY (webhook_id, inbox_key)
);

CREATE TABLE IF NOT EXISTS webhook_dead_letters (
  delivery_id text PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES webhooks (webhook_id) ON DELETE CASCADE,
  notification_id text NOT NULL REFERENCES notifications (notification_id),
  repository_id text NOT NULL,
  attempts integer NOT NULL,
  last_error text NOT NULL,
  dead_at timestamptz NOT NULL,
  -- 'dead': waiting for the principal; 'redelivering': asked for again, not yet delivered.
  state text NOT NULL DEFAULT 'dead' CHECK (state IN ('dead', 'redelivering')),
  redelivery_attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz
);

CREATE INDEX IF NOT EXISTS webhook_dead_letters_webhook_idx ON webhook_dead_letters (webhook_id, dead_at, delivery_id);
CREATE INDEX IF NOT EXISTS webhook_dead_letters_redelivering_idx ON webhook_dead_letters (next_attempt_at) WHERE state = 'redelivering';
