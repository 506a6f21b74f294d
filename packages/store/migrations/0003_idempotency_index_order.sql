-- An append transaction checks the idempotency keys of a whole batch at once, as
-- room_id = ANY(rooms) AND idempotency_key = ANY(keys): with the key right after the room, one index
-- scan answers that, whatever the room's size. Same uniqueness as the index it replaces.
CREATE UNIQUE INDEX IF NOT EXISTS messages_room_idempotency_idx
  ON messages (room_id, idempotency_key, sender_kind, sender_id);

DROP INDEX IF EXISTS messages_idempotency_idx;
