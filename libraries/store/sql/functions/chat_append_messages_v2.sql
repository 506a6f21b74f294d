-- The append entry point of API releases whose items bring no rate budget, kept so that such a
-- process still appends while a rollout replaces it: chat_append_messages_v3 with the same result
-- (an item without a budget is not counted).
CREATE OR REPLACE FUNCTION chat_append_messages_v2(batch json)
RETURNS TABLE (
  ord integer, outcome text, outbox_id bigint, room_id text, seq bigint, message_id text, created_ms bigint,
  stored_message jsonb
)
LANGUAGE sql AS $$
  SELECT * FROM chat_append_messages_v3(batch)
$$;
