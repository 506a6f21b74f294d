-- `chat_append_messages_v3` (0007) with one change: an append whose budget was spent when the batch
-- took its units asks once more when its turn comes, after the batch's earlier appends ran, so a
-- unit an earlier replay of the same batch gave back goes to it instead of being left unused until
-- the next append. Its result and its callers are unchanged.
CREATE OR REPLACE FUNCTION chat_append_messages_v3(batch json)
RETURNS TABLE (
  ord integer, outcome text, outbox_id bigint, room_id text, seq bigint, message_id text, created_ms bigint,
  stored_message jsonb
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
  -- ords of the items that took a unit here, and of those whose budget was spent
  counted integer[] := '{}';
  refused integer[] := '{}';
  replay_query constant text := 'SELECT $1, ''replayed''::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text,
      NULL::bigint, to_jsonb(m) - ''body_markdown'' || jsonb_build_object(''body_base64'', encode(m.body_markdown, ''base64''))
    FROM messages m
    WHERE m.room_id = $2 AND m.sender_kind = $3 AND m.sender_id = $4 AND m.idempotency_key = $5';
BEGIN
  FOR item IN
    SELECT b.*
    FROM json_to_recordset(batch) AS b(ord integer, rate_sender_kind text, rate_sender_id text, rate_room_key text,
      rate_window_start_ms bigint, rate_limit integer)
    WHERE b.rate_room_key IS NOT NULL
    ORDER BY b.rate_sender_kind COLLATE "C", b.rate_sender_id COLLATE "C", b.rate_room_key COLLATE "C", b.ord
  LOOP
    IF chat_take_append_rate_unit(item.rate_sender_kind, item.rate_sender_id, item.rate_room_key,
        item.rate_window_start_ms, item.rate_limit) THEN
      counted := counted || item.ord;
    ELSE
      refused := refused || item.ord;
    END IF;
  END LOOP;

  FOR item IN
    SELECT b.*
    FROM json_to_recordset(batch) AS b(ord integer, scope_key text, now_ms bigint, fresh_id text, repository_id text,
      branch_id text, sender_kind text, sender_id text, request_id text, idempotency_key text, body_base64 text,
      body_bytes integer, rendered_html text, mentions jsonb, authorization_decision_id text, authorizing_subject_id text,
      authorizing_subject_kind text, bot_credential_id text, bot_grant_id text, rate_sender_kind text,
      rate_sender_id text, rate_room_key text, rate_window_start_ms bigint, rate_limit integer)
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
      IF item.ord = ANY (counted) THEN
        PERFORM chat_return_append_rate_unit(item.rate_sender_kind, item.rate_sender_id, item.rate_room_key,
          item.rate_window_start_ms);
      END IF;
      -- An exact retry is answered before the seal.
      RETURN QUERY EXECUTE replay_query USING item.ord, room.room_id, item.sender_kind, item.sender_id, item.idempotency_key;
      CONTINUE WHEN FOUND;
      RETURN QUERY SELECT item.ord, 'sealed'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::jsonb;
      CONTINUE;
    END IF;

    IF item.ord = ANY (refused) THEN
      -- An exact retry is answered before the spent budget.
      RETURN QUERY EXECUTE replay_query USING item.ord, room.room_id, item.sender_kind, item.sender_id, item.idempotency_key;
      CONTINUE WHEN FOUND;
      -- A unit an earlier replay of this batch gave back is free again. This transaction locked the
      -- budget's row when it was refused, so asking again takes no new lock.
      IF chat_take_append_rate_unit(item.rate_sender_kind, item.rate_sender_id, item.rate_room_key,
          item.rate_window_start_ms, item.rate_limit) THEN
        counted := counted || item.ord;
      ELSE
        RETURN QUERY SELECT item.ord, 'rate_limited'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::bigint,
          NULL::jsonb;
        CONTINUE;
      END IF;
    END IF;

    IF last_id IS NULL OR item.now_ms > last_ms THEN
      next_ms := item.now_ms;
      next_id := item.fresh_id;
    ELSE
      next_ms := last_ms;
      next_id := chat_ulid_increment(last_id);
      IF next_id IS NULL THEN
        next_ms := last_ms + 1;
        next_id := chat_ulid_time(next_ms) || substr(item.fresh_id, 11);
      END IF;
    END IF;

    INSERT INTO messages (room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id,
        request_id, idempotency_key, body_markdown, body_bytes, rendered_html, mentions, created_at,
        authorization_decision_id, authorizing_subject_id, authorizing_subject_kind, bot_credential_id, bot_grant_id)
      VALUES (room.room_id, next_seq + 1, next_id, item.repository_id, item.branch_id, item.sender_kind, item.sender_id,
        item.request_id, item.idempotency_key, decode(item.body_base64, 'base64'), item.body_bytes, item.rendered_html,
        item.mentions, timestamptz 'epoch' + next_ms * interval '1 millisecond', item.authorization_decision_id,
        item.authorizing_subject_id, item.authorizing_subject_kind, item.bot_credential_id, item.bot_grant_id)
      ON CONFLICT (room_id, sender_kind, sender_id, idempotency_key) DO NOTHING;
    IF NOT FOUND THEN
      IF item.ord = ANY (counted) THEN
        PERFORM chat_return_append_rate_unit(item.rate_sender_kind, item.rate_sender_id, item.rate_room_key,
          item.rate_window_start_ms);
      END IF;
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
    ord := item.ord; outcome := 'created'; outbox_id := new_outbox_id;
    room_id := room.room_id; seq := next_seq; message_id := next_id; created_ms := next_ms;
    RETURN NEXT;
  END LOOP;

  IF room.room_id IS NOT NULL AND next_seq <> room.last_seq THEN
    UPDATE rooms SET last_seq = next_seq, last_message_at = timestamptz 'epoch' + last_ms * interval '1 millisecond',
      last_message_id = last_id
    WHERE rooms.room_id = room.room_id;
  END IF;
END
$$;
