-- What search matches a message against (migrations/0010_message_search.sql): its body with ASCII
-- letters lowercased and every run of ASCII whitespace one space. Only ASCII, spelled out rather
-- than lower() and \s, so the text is the same whatever the database's locale (lower() in a C-locale
-- database leaves É alone, in a UTF-8 one it does not), and the query side normalizes alike
-- (services/api/src/domain/search-query.ts). The body is bytea and may hold NUL, which text cannot:
-- a body with NUL is searched without it (each byte, as a hex pair, is checked on its own
-- boundary). Substring matching over this text, with its pg_trgm index, is what makes identifiers,
-- paths, URLs, commit prefixes and partial words findable.
CREATE OR REPLACE FUNCTION chat_message_search_text(body bytea)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT translate(regexp_replace(convert_from(
    CASE WHEN position('\x00'::bytea IN body) = 0 THEN body
      ELSE decode(replace(replace(regexp_replace(encode(body, 'hex'), '(..)', '\1 ', 'g'), '00 ', ''), ' ', ''), 'hex')
    END, 'UTF8'), '[ \t\n\r\f\v]+', ' ', 'g'), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
$$;
