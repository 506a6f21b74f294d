-- The append rate window (spec section 8) lives beside the messages: a plain append takes its unit
-- inside its own append statement (`chat_append_messages_v3`), so an append is one round trip to
-- PostgreSQL and none to Redis, and the unit is exact: a replay or a sealed room never takes one,
-- and a refused append is never half-counted. Appends with mentions take their unit before core
-- is asked who may read the room (`chat_take_append_rate_unit`) and give it back when core could
-- not answer (`chat_return_append_rate_unit`).
--
-- One row per budget: a sender in a room (`room_key` the room's scope key) or a sender across
-- rooms (`room_key` '*'). `window_start_ms` is the start of the fixed window the row counts, as the
-- API's clock placed it; a request from an instance whose clock is behind counts in the newest
-- window the row has seen, so skewed clocks never let more through. Rows of ended windows are
-- reused by the next append of their budget, and swept by `chat_sweep_append_rate_windows`.
CREATE TABLE append_rate_windows (
  sender_kind text NOT NULL,
  sender_id text NOT NULL,
  room_key text NOT NULL,
  window_start_ms bigint NOT NULL,
  used integer NOT NULL,
  PRIMARY KEY (sender_kind, sender_id, room_key)
) WITH (fillfactor = 80);

-- Takes one unit of a budget in the window starting at p_window_start_ms: true when taken, NULL when
-- the budget is spent. An update of a row never touches its key, so it stays a HOT update.
CREATE FUNCTION chat_take_append_rate_unit(p_sender_kind text, p_sender_id text, p_room_key text,
    p_window_start_ms bigint, p_limit integer)
RETURNS boolean
LANGUAGE sql AS $$
  INSERT INTO append_rate_windows AS w (sender_kind, sender_id, room_key, window_start_ms, used)
  VALUES (p_sender_kind, p_sender_id, p_room_key, p_window_start_ms, 1)
  ON CONFLICT (sender_kind, sender_id, room_key) DO UPDATE
    SET window_start_ms = GREATEST(w.window_start_ms, excluded.window_start_ms),
        used = CASE WHEN excluded.window_start_ms > w.window_start_ms THEN 1 ELSE w.used + 1 END
    WHERE excluded.window_start_ms > w.window_start_ms OR w.used < p_limit
  RETURNING true
$$;

-- Gives a unit back to the window it was taken in; nothing once that window has ended.
CREATE FUNCTION chat_return_append_rate_unit(p_sender_kind text, p_sender_id text, p_room_key text,
    p_window_start_ms bigint)
RETURNS void
LANGUAGE sql AS $$
  UPDATE append_rate_windows SET used = used - 1
  WHERE sender_kind = p_sender_kind AND sender_id = p_sender_id AND room_key = p_room_key
    AND window_start_ms = p_window_start_ms AND used > 0
$$;

-- Deletes up to p_limit rows of windows that started before p_before_ms (so have ended), skipping
-- rows an append holds: a sweep never waits on an append, nor an append on a sweep. Returns how
-- many it deleted.
CREATE FUNCTION chat_sweep_append_rate_windows(p_before_ms bigint, p_limit integer)
RETURNS bigint
LANGUAGE sql AS $$
  WITH swept AS (
    DELETE FROM append_rate_windows
    WHERE ctid IN (
      SELECT ctid FROM append_rate_windows WHERE window_start_ms < p_before_ms
      LIMIT p_limit FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*) FROM swept
$$;

-- The append function with the rate window inside (`chat_append_messages_v3`): chat_append_messages_v2
-- (0006) plus, per item, an optional budget (rate_sender_kind, rate_sender_id, rate_room_key,
-- rate_window_start_ms, rate_limit; rate_room_key NULL when the append is not counted here: it took
-- its unit before, or no limit applies). Units are taken first, for the whole batch in budget order,
-- and rooms are locked after, in scope-key order: every transaction that holds both takes them in
-- that one order, so none waits on another in a cycle. An item whose budget is spent is answered
-- `replayed` when its key is stored (a retry is never refused for a budget its first attempt helped
-- spend) and `rate_limited` otherwise; an item that took a unit and turns out a replay, or meets a
-- sealed room, gives it back in the same transaction. `chat_append_messages_v2` stays for API
-- processes of the release before during a rollout.
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
      rate_sender_id text, rate_room_key text, rate_window_start_ms bigint)
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

    IF room.state = 'sealed' OR item.ord = ANY (refused) THEN
      IF item.ord = ANY (counted) THEN
        PERFORM chat_return_append_rate_unit(item.rate_sender_kind, item.rate_sender_id, item.rate_room_key,
          item.rate_window_start_ms);
      END IF;
      -- An exact retry is answered before the seal or the spent budget.
      RETURN QUERY EXECUTE replay_query USING item.ord, room.room_id, item.sender_kind, item.sender_id, item.idempotency_key;
      CONTINUE WHEN FOUND;
      RETURN QUERY SELECT item.ord, CASE WHEN room.state = 'sealed' THEN 'sealed' ELSE 'rate_limited' END::text,
        NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::jsonb;
      CONTINUE;
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
