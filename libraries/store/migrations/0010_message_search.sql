-- Search over messages (docs/interface.md, "Extensions": search). Each message keeps `search_text`,
-- its body with ASCII letters lowercased and every run of ASCII whitespace made one space, and a pg_trgm GIN index over it
-- answers substring matches of 3 or more characters: partial words, any part of a snake_case,
-- camelCase, dotted or hyphenated identifier and the identifier whole, file paths, URLs, a commit
-- ID by any prefix, text inside code, and exact phrases. pg_trgm is a trusted extension: the
-- migration role needs CREATE on the database, not superuser. It lives in one schema per database:
-- this installs it in the first schema of the search path when the database has none, and an
-- operator may install it beforehand in a schema of their choice; the index below finds it there.
--
-- The append statement (sql/functions/chat_append_messages_v4.sql) fills the column with
-- chat_message_search_text(), in the same INSERT, so a message is searchable when its append
-- commits. This migration backfills older rows with the same expression written out (a migration
-- runs before its release's function files, so it cannot call that function); keep the two alike.
--
-- Locks: adding the column (nullable, no default) rewrites nothing. The backfill updates rows, which
-- does not block appends (they insert new rows). CREATE INDEX holds a SHARE lock on messages until
-- the migration commits, which blocks appends for the index build: seconds for a few hundred thousand
-- messages, longer past that. On a large table an operator builds the index beforehand, without
-- blocking writes, with
--   CREATE INDEX CONCURRENTLY messages_search_text_trgm_idx ON messages USING gin (search_text gin_trgm_ops);
-- (after CREATE EXTENSION pg_trgm and this column exist), and this migration then finds it and skips
-- the build. Rows appended by a release without this column's filler stay NULL until a search index
-- rebuild: UPDATE messages SET search_text = ... WHERE search_text IS NULL, with the expression below.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

ALTER TABLE messages ADD COLUMN IF NOT EXISTS search_text text;

UPDATE messages SET search_text = translate(regexp_replace(convert_from(
    CASE WHEN position('\x00'::bytea IN body_markdown) = 0 THEN body_markdown
      ELSE decode(replace(replace(regexp_replace(encode(body_markdown, 'hex'), '(..)', '\1 ', 'g'), '00 ', ''), ' ', ''), 'hex')
    END, 'UTF8'), '[ \t\n\r\f\v]+', ' ', 'g'), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
  WHERE search_text IS NULL;

-- The operator class is named with the extension's schema, which need not be on the search path
-- (an extension lives in one schema per database).
DO $$
DECLARE
  trgm_schema text;
BEGIN
  SELECT n.nspname INTO trgm_schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
    WHERE e.extname = 'pg_trgm';
  EXECUTE format('CREATE INDEX IF NOT EXISTS messages_search_text_trgm_idx ON messages USING gin (search_text %I.gin_trgm_ops)',
    trgm_schema);
END
$$;
