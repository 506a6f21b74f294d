-- Takes one unit of an append rate budget (a row of append_rate_windows: a sender in a room, or
-- across rooms with p_room_key '*') in the window starting at p_window_start_ms: true when taken,
-- NULL when the budget is spent. A row of an ended window is reused by its budget's next append;
-- a request from an instance whose clock is behind counts in the newest window the row has seen, so
-- skewed clocks never let more through. An update never touches the row's key, so it stays a HOT
-- update. Called by chat_append_messages_v4, in the append itself or in the hold step of an append
-- with mentions, which takes its unit before core is asked who may read the room.
CREATE OR REPLACE FUNCTION chat_take_append_rate_unit(p_sender_kind text, p_sender_id text, p_room_key text,
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
