-- Mention fan-out follows message order within a room: a fan-out row is claimed only while no
-- earlier row of its room is pending (dead rows do not count), so a target's notifications from one
-- room are written in message order. This index finds a room's earliest pending row.
CREATE INDEX IF NOT EXISTS mention_fanout_room_idx ON mention_fanout (room_id, seq) WHERE NOT dead;
