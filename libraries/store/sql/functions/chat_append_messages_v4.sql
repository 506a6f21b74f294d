-- The append path in one statement: a batch of appends ($1: a JSON array, one object per append,
-- `ord` its place in arrival order; see message-append.ts for its fields), to one room or several,
-- runs as one round trip in its own transaction. Rooms must exist, but for items that bring
-- `seal`. This function is where an
-- append's idempotency is decided and where it takes its unit of the rate window.
--
-- Each item is one of two steps (`step`):
-- - 'append' (or absent): store the message, or answer why not.
-- - 'hold': everything an append decides except the insert. A stored message with the item's key
--   answers it as a replay; otherwise the item takes its rate unit and is answered `held`. An
--   append with mentions holds first, so a retry is answered and the limit met before core is asked
--   who may read the room; its 'append' step then brings `rate_held` true and takes no second unit.
-- `seal` true records a seal core reported before the item is decided: a sealed room answers an
-- exact retry and refuses the rest.
--
-- Rate budgets: an item may bring one (rate_sender_kind, rate_sender_id, rate_room_key,
-- rate_window_start_ms, rate_limit; rate_room_key NULL when no limit applies). Units are taken
-- first, for the whole batch in budget order, and rooms are locked after, in scope-key order: every
-- transaction that holds both takes them in that one order, so none waits on another in a cycle.
-- An item that holds a unit (taken here, or `rate_held`) and turns out a replay, or meets a sealed
-- room, gives it back in the same transaction; an item whose budget was spent asks once more when
-- its turn comes, so a unit an earlier replay of the batch gave back goes to it.
--
-- Each room is locked before its appends run, which keeps its seq contiguous and (created_at,
-- message_id) in commit order. Per item, one row: `created` with the outbox id and what the
-- database decided (room_id, seq, message_id, created_ms: created_at in Unix milliseconds;
-- stored_message NULL); `replayed` with `stored_message`, the stored message of the same (room,
-- sender, key), stored earlier or earlier in this batch, as a JSON object of its columns with the
-- body as `body_base64` (the other columns NULL), which answers a retry even when the room is
-- sealed or the budget spent (a retry is never refused for a budget its first attempt helped
-- spend); `held`, `sealed` or `rate_limited` (all NULL but ord). The result is narrow on purpose:
-- every result column costs the client a field description per call and a slot in every row, and
-- nearly every append is a created one. Message IDs follow the rule of monotonic-ulid.ts: the
-- caller's fresh ULID when its time is past the room's last message, else the last ID plus one.
CREATE OR REPLACE FUNCTION chat_append_messages_v4(batch json)
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
  -- ords of the items that hold a unit (taken here or by their hold step), and of those whose
  -- budget was spent
  counted integer[] := '{}';
  refused integer[] := '{}';
  -- Run with EXECUTE, so it is planned for its values every time: a plan cached while the table was
  -- small may use the (room_id, seq) primary key and read the whole room (only retries and sealed
  -- rooms come here).
  replay_query constant text := 'SELECT $1, ''replayed''::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text,
      NULL::bigint, to_jsonb(m) - ''body_markdown'' - ''search_text'' || jsonb_build_object(''body_base64'', encode(m.body_markdown, ''base64''))
    FROM messages m
    WHERE m.room_id = $2 AND m.sender_kind = $3 AND m.sender_id = $4 AND m.idempotency_key = $5';
BEGIN
  FOR item IN
    SELECT b.*
    FROM json_to_recordset(batch) AS b(ord integer, rate_sender_kind text, rate_sender_id text, rate_room_key text,
      rate_window_start_ms bigint, rate_limit integer, rate_held boolean)
    WHERE b.rate_room_key IS NOT NULL
    ORDER BY b.rate_sender_kind COLLATE "C", b.rate_sender_id COLLATE "C", b.rate_room_key COLLATE "C", b.ord
  LOOP
    IF item.rate_held IS TRUE THEN
      -- Taken by the item's hold step: it counts as taken, and is not taken again.
      counted := counted || item.ord;
    ELSIF chat_take_append_rate_unit(item.rate_sender_kind, item.rate_sender_id, item.rate_room_key,
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
      rate_sender_id text, rate_room_key text, rate_window_start_ms bigint, rate_limit integer, rate_held boolean,
      step text, seal boolean)
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
        -- A sealed room nobody wrote to stays virtual: it holds no message a retry could name.
        IF item.seal THEN
          IF item.ord = ANY (counted) THEN
            PERFORM chat_return_append_rate_unit(item.rate_sender_kind, item.rate_sender_id, item.rate_room_key,
              item.rate_window_start_ms);
          END IF;
          RETURN QUERY SELECT item.ord, 'sealed'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::jsonb;
          CONTINUE;
        END IF;
        RAISE EXCEPTION 'room % does not exist', item.scope_key;
      END IF;
      next_seq := room.last_seq;
      last_id := room.last_message_id;
      last_ms := floor(extract(epoch FROM room.last_message_at) * 1000)::bigint;
    END IF;

    IF item.seal AND room.state <> 'sealed' THEN
      UPDATE rooms SET state = 'sealed', sealed_at = coalesce(rooms.sealed_at, timestamptz 'epoch' + item.now_ms * interval '1 millisecond')
        WHERE rooms.room_id = room.room_id;
      room.state := 'sealed';
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

    IF item.step = 'hold' THEN
      RETURN QUERY EXECUTE replay_query USING item.ord, room.room_id, item.sender_kind, item.sender_id, item.idempotency_key;
      IF FOUND THEN
        IF item.ord = ANY (counted) THEN
          PERFORM chat_return_append_rate_unit(item.rate_sender_kind, item.rate_sender_id, item.rate_room_key,
            item.rate_window_start_ms);
        END IF;
        CONTINUE;
      END IF;
      RETURN QUERY SELECT item.ord, 'held'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::jsonb;
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
    -- conflict leaves nothing behind and the message stored with the key is the answer. search_text is
    -- what search matches (chat_message_search_text.sql), written here so a message is searchable as
    -- soon as its append commits.
    INSERT INTO messages (room_id, seq, message_id, repository_id, branch_id, sender_kind, sender_id,
        request_id, idempotency_key, body_markdown, body_bytes, rendered_html, mentions, created_at,
        authorization_decision_id, authorizing_subject_id, authorizing_subject_kind, bot_credential_id, bot_grant_id,
        search_text)
      VALUES (room.room_id, next_seq + 1, next_id, item.repository_id, item.branch_id, item.sender_kind, item.sender_id,
        item.request_id, item.idempotency_key, decode(item.body_base64, 'base64'), item.body_bytes, item.rendered_html,
        item.mentions, timestamptz 'epoch' + next_ms * interval '1 millisecond', item.authorization_decision_id,
        item.authorizing_subject_id, item.authorizing_subject_kind, item.bot_credential_id, item.bot_grant_id,
        chat_message_search_text(decode(item.body_base64, 'base64')))
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
    -- The caller has the rest of the new message; only what the database decided goes back.
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
