-- Storage and autovacuum settings per table, by how each table is written (docs/operations.md,
-- "PostgreSQL at size", has the measurements). Only reloptions change: no rewrite, and ALTER TABLE
-- SET of fillfactor and autovacuum options takes SHARE UPDATE EXCLUSIVE, which reads and writes do
-- not wait on, so this is safe on a live database. New fill factors apply to pages filled from now on.

-- Rooms and inboxes: one row updated per append (counters, last ID and time), none of it indexed.
-- Free space on each page lets those updates stay HOT (same page, no index entries); a full page
-- makes every update write new entries into both unique indexes.
ALTER TABLE rooms SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
ALTER TABLE inboxes SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);

-- Messages and notifications: append-only, never updated or deleted, so pages are filled whole
-- (fill factor 100, the default). Vacuum runs on inserts every 100,000 rows whatever the size
-- (not every 20% of the table, which at a billion rows is one pass over 200 million): each pass then
-- marks a small tail all-visible and frozen, so no anti-wraparound pass ever has to read the whole
-- table at once. Statistics are refreshed every 1% of the table so the planner's row estimates per
-- room follow the growth.
ALTER TABLE messages SET (fillfactor = 100, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 100000,
  autovacuum_analyze_scale_factor = 0.01);
ALTER TABLE notifications SET (fillfactor = 100, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 100000,
  autovacuum_analyze_scale_factor = 0.01);

-- Queues: the outbox (a row per append, deleted once relayed) and mention_fanout (a row per
-- message with mentions, deleted once fanned out) stay small but turn over their whole content
-- every few seconds. Vacuum them whenever autovacuum visits, unthrottled: dead rows left behind are
-- what the relay's and the sweeper's index scans would step over.
ALTER TABLE outbox SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 10000);
ALTER TABLE mention_fanout SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_cost_delay = 0);
