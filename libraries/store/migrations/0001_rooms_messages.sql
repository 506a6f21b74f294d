-- Rooms, messages (with their idempotency keys), the outbox, and service keys.
CREATE TABLE IF NOT EXISTS service_keys (
  name text PRIMARY KEY,
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS rooms (
  room_id text PRIMARY KEY,
  scope_key text NOT NULL UNIQUE,
  repository_id text NOT NULL,
  branch_id text,
  kind text NOT NULL CHECK (kind IN ('repository', 'branch')),
  state text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'sealed')),
  created_at timestamptz NOT NULL,
  sealed_at timestamptz,
  -- Contiguous per-room sequence: the last message's seq is also the message count.
  last_seq bigint NOT NULL DEFAULT 0,
  last_message_at timestamptz,
  last_message_id text
);

CREATE TABLE IF NOT EXISTS messages (
  room_id text NOT NULL REFERENCES rooms (room_id),
  seq bigint NOT NULL,
  message_id text NOT NULL UNIQUE,
  repository_id text NOT NULL,
  branch_id text,
  sender_kind text NOT NULL CHECK (sender_kind IN ('user', 'bot')),
  sender_id text NOT NULL,
  request_id text NOT NULL,
  idempotency_key text NOT NULL,
  -- bytea, not text: bodies are stored byte for byte, and PostgreSQL text cannot hold NUL.
  body_markdown bytea NOT NULL,
  body_bytes integer NOT NULL,
  rendered_html text NOT NULL,
  mentions jsonb,
  created_at timestamptz NOT NULL,
  authorization_decision_id text,
  authorizing_subject_id text,
  authorizing_subject_kind text,
  bot_credential_id text,
  bot_grant_id text,
  PRIMARY KEY (room_id, seq)
);

-- Idempotency keys are scoped to (sender, room); appends to one room are serialized on the room row,
-- so this index is both the lookup path for retries and the last line of defence against doubles.
CREATE UNIQUE INDEX IF NOT EXISTS messages_idempotency_idx
  ON messages (room_id, sender_kind, sender_id, idempotency_key);

-- Transactional outbox: written in the append transaction, drained to the backbone by the relay.
CREATE TABLE IF NOT EXISTS outbox (
  id bigserial PRIMARY KEY,
  channel text NOT NULL,
  scope_key text NOT NULL,
  seq bigint NOT NULL,
  payload text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
