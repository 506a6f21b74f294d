-- The append path in one round trip: a batch of appends, to one room or several, runs as one
-- statement in its own transaction. Before this, each batch took five (BEGIN, lock, key check,
-- insert, COMMIT), and on a 2-core machine the API spent more CPU writing those round trips to its
-- sockets than on anything else.

-- Message-channel outbox entries carry no payload: it is the message itself, which the relay reads
-- from `messages` (it cannot be written in SQL without duplicating the API's presentation).
ALTER TABLE outbox ALTER COLUMN payload DROP NOT NULL;

-- The random part (last 16 characters) of a ULID plus one, or NULL when all 80 bits are set.
CREATE OR REPLACE FUNCTION chat_ulid_increment(id text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  result text := id;
  i integer;
  digit integer;
BEGIN
  FOR i IN REVERSE 26..11 LOOP
    digit := strpos(alphabet, substr(result, i, 1)) - 1;
    IF digit < 31 THEN
      RETURN overlay(result PLACING substr(alphabet, digit + 2, 1) FROM i FOR 1);
    END IF;
    result := overlay(result PLACING '0' FROM i FOR 1);
  END LOOP;
  RETURN NULL;
END
$$;

-- The 10-character time part of a ULID for a Unix time in milliseconds.
CREATE OR REPLACE FUNCTION chat_ulid_time(ms bigint) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  result text := '';
  rest bigint := ms;
BEGIN
  FOR i IN 1..10 LOOP
    result := substr(alphabet, (rest % 32)::integer + 1, 1) || result;
    rest := rest / 32;
  END LOOP;
  RETURN result;
END
$$;

-- Appends a batch ($1: a JSON array, one object per append, `ord` its place in arrival order; see
-- message-append.ts for its fields). Rooms must exist. Each room is locked (in scope-key order, so two batches never
-- wait on each other) before its appends run, which keeps its seq contiguous and (created_at,
-- message_id) in commit order. Per append, one row: `created` with the outbox id and what the
-- database decided (room_id, seq, message_id, created_at; the other columns NULL), `replayed` with
-- the stored message of the same (room, sender, key) — stored earlier or earlier in this batch — or
-- `sealed`. Message IDs follow the rule of monotonic-ulid.ts: the caller's fresh
-- ULID when its time is past the room's last message, else the last ID plus one.
CREATE OR REPLACE FUNCTION chat_append_messages_v1(batch json)
RETURNS TABLE (
  ord integer, outcome text, outbox_id bigint,
  room_id text, seq bigint, message_id text, repository_id text, branch_id text, sender_kind text, sender_id text,
  request_id text, idempotency_key text, body_markdown bytea, body_bytes integer, rendered_html text, mentions jsonb,
  created_at timestamptz, authorization_decision_id text, authorizing_subject_id text, authorizing_subject_kind text,
  bot_credential_id text, bot_grant_id text
)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  item record;
  room rooms%ROWTYPE;
  last_ms bigint;
  last_id text;
  next_seq bigint;
  next_ms bigint;
  next_id text;
  new_outbox_id bigint;
  -- Run with EXECUTE, so it is planned for its values every time: a plan cached while the table was
  -- small may use the (room_id, seq) primary key and read the whole room (only retries and sealed
  -- rooms come here).
  replay_query constant text := 'SELECT $1, ''replayed''::text, NULL::bigint, m.* FROM messages m
    WHERE m.room_id = $2 AND m.sender_kind = $3 AND m.sender_id = $4 AND m.idempotency_key = $5';
BEGIN
  FOR item IN
    SELECT b.*
    FROM json_to_recordset(batch) AS b(ord integer, scope_key text, now_ms bigint, fresh_id text, repository_id text,
      branch_id text, sender_kind text, sender_id text, request_id text, idempotency_key text, body_base64 text,
      body_bytes integer, rendered_html text, mentions jsonb, authorization_decision_id text, authorizing_subject_id text,
      authorizing_subject_kind text, bot_credential_id text, bot_grant_id text)
    ORDER BY b.scope_key COLLATE "C", b.ord
  LOOP
    IF room.scope_key IS DISTINCT FROM item.scope_key THEN
      IF room.room_id IS NOT NULL AND next_seq <> room.last_seq THEN
        UPDATE rooms SET last_seq = next_seq, last_message_at = timestamptz 'epoch' + last_ms * interval '1 millisecond',
          last_message_id = last_id
        WHERE rooms.room_id = room.room_id;
      END IF;
      SELECT * INTO room FROM rooms WHERE rooms.scope_key = item.scope_key FOR UPDATE;
      IF NOT FOUND THEN
        RAISE EXCEPTION 'room % does not exist', item.scope_key;
      END IF;
      next_seq := room.last_seq;
      last_id := room.last_message_id;
      last_ms := floor(extract(epoch FROM room.last_message_at) * 1000)::bigint;
    END IF;

    IF room.state = 'sealed' THEN
      -- An exact retry is answered before the seal.
      RETURN QUERY EXECUTE replay_query USING item.ord, room.room_id, item.sender_kind, item.sender_id, item.idempotency_key;
      CONTINUE WHEN FOUND;
      RETURN QUERY SELECT item.ord, 'sealed'::text, NULL::bigint, (NULL::messages).*;
      CONTINUE;
    END IF;

    IF last_id IS NULL OR item.now_ms > last_ms THEN
      next_ms := item.now_ms;
      next_id := item.fresh_id;
    ELSE
      next_ms := last_ms;
      next_id := chat_ulid_increment(last_id);
      IF next_id IS NULL THEN
        -- 80 random bits used up within one millisecond: move to the next one.
        next_ms := last_ms + 1;
        next_id := chat_ulid_time(next_ms) || substr(item.fresh_id, 11);
      END IF;
    END IF;

    -- The idempotency check is the insert itself: under the room lock no other append to this room
    -- runs, and the unique index sees this batch's own earlier inserts, so it cannot race. A
    -- conflict leaves nothing behind and the message stored with the key is the answer.
    INSERT INTO messages (room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id,
        request_id, idempotency_key, body_markdown, body_bytes, rendered_html, mentions, created_at,
        authorization_decision_id, authorizing_subject_id, authorizing_subject_kind, bot_credential_id, bot_grant_id)
      VALUES (room.room_id, next_seq + 1, next_id, item.repository_id, item.branch_id, item.sender_kind, item.sender_id,
        item.request_id, item.idempotency_key, decode(item.body_base64, 'base64'), item.body_bytes, item.rendered_html,
        item.mentions, timestamptz 'epoch' + next_ms * interval '1 millisecond', item.authorization_decision_id,
        item.authorizing_subject_id, item.authorizing_subject_kind, item.bot_credential_id, item.bot_grant_id)
      ON CONFLICT (room_id, sender_kind, sender_id, idempotency_key) DO NOTHING;
    IF NOT FOUND THEN
      RETURN QUERY EXECUTE replay_query USING item.ord, room.room_id, item.sender_kind, item.sender_id, item.idempotency_key;
      CONTINUE;
    END IF;
    next_seq := next_seq + 1;
    last_ms := next_ms;
    last_id := next_id;

    INSERT INTO outbox (channel, scope_key, seq, payload) VALUES ('messages', room.room_id, next_seq, NULL)
      RETURNING id INTO new_outbox_id;
    IF item.mentions IS NOT NULL AND jsonb_array_length(item.mentions) > 0 THEN
      INSERT INTO mention_fanout (message_id, room_id, seq, created_at, next_attempt_at)
      VALUES (next_id, room.room_id, next_seq, timestamptz 'epoch' + next_ms * interval '1 millisecond',
        timestamptz 'epoch' + next_ms * interval '1 millisecond')
      ON CONFLICT (message_id) DO NOTHING;
    END IF;
    -- The caller has the rest of the new message; only what the database decided goes back.
    ord := item.ord; outcome := 'created'; outbox_id := new_outbox_id;
    room_id := room.room_id; seq := next_seq; message_id := next_id; created_at := timestamptz 'epoch' + next_ms * interval '1 millisecond';
    RETURN NEXT;
  END LOOP;

  IF room.room_id IS NOT NULL AND next_seq <> room.last_seq THEN
    UPDATE rooms SET last_seq = next_seq, last_message_at = timestamptz 'epoch' + last_ms * interval '1 millisecond',
      last_message_id = last_id
    WHERE rooms.room_id = room.room_id;
  END IF;
END
$$;
