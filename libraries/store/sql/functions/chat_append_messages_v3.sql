-- The append statement of releases that predate the hold step (chat_append_messages_v4.sql), kept
-- while a rollout may still run them: their items carry no `step`, `seal` or `rate_held`, which
-- v4 reads as a plain append, so both releases share one body. A later release drops it.
CREATE OR REPLACE FUNCTION chat_append_messages_v3(batch json)
RETURNS TABLE (
  ord integer, outcome text, outbox_id bigint, room_id text, seq bigint, message_id text, created_ms bigint,
  stored_message jsonb
)
LANGUAGE sql AS $$
  SELECT * FROM chat_append_messages_v4(batch)
$$;
