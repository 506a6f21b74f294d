-- Gives a unit back to the window it was taken in, nothing once that window has ended: an append
-- that took a unit and turned out a replay, met a sealed room, or could not be authorized (core
-- did not answer) does not count.
CREATE OR REPLACE FUNCTION chat_return_append_rate_unit(p_sender_kind text, p_sender_id text, p_room_key text,
    p_window_start_ms bigint)
RETURNS void
LANGUAGE sql AS $$
  UPDATE append_rate_windows SET used = used - 1
  WHERE sender_kind = p_sender_kind AND sender_id = p_sender_id AND room_key = p_room_key
    AND window_start_ms = p_window_start_ms AND used > 0
$$;
