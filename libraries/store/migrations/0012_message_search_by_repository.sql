-- Search's index keyed by repository first. Every search names its repository
-- (m.repository_id = $1, src/message-search.ts), and a word common across the whole store (matched by
-- tens of thousands of messages) is rare in one repository: with the repository in the index, the
-- GIN scan intersects the repository's entries with the words' trigrams and reads only that
-- repository's matches from the table, instead of every match of the store and then dropping the
-- others. btree_gin gives text an operator class GIN can key on; like pg_trgm it is a trusted
-- extension (the migration role needs CREATE on the database, not superuser).
--
-- fastupdate off: each append adds its entries to the index itself, a steady fraction of a
-- millisecond, instead of to GIN's pending list, whose flush, when the list fills, lands on one
-- append (and those waiting behind it) as a pause of tens of milliseconds: the append p99's tail.
--
-- Locks and large tables: as for 0010. On a large table an operator builds the index beforehand,
-- without blocking writes, with
--   CREATE EXTENSION IF NOT EXISTS btree_gin;
--   CREATE INDEX CONCURRENTLY messages_search_repository_trgm_idx ON messages USING gin (repository_id, search_text gin_trgm_ops) WITH (fastupdate = off);
-- and this migration then finds it, skips the build, and drops the index it replaces.
CREATE EXTENSION IF NOT EXISTS btree_gin;

DO $$
DECLARE
  trgm_schema text;
BEGIN
  SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pg_trgm';
  EXECUTE format('CREATE INDEX IF NOT EXISTS messages_search_repository_trgm_idx ON messages USING gin (repository_id, search_text %I.gin_trgm_ops) WITH (fastupdate = off)',
    trgm_schema);
END
$$;

DROP INDEX IF EXISTS messages_search_text_trgm_idx;
