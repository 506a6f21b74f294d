-- The 10-character time part of a ULID for a Unix time in milliseconds: the append function starts
-- the next millisecond's IDs with it once chat_ulid_increment has used up a millisecond.
CREATE OR REPLACE FUNCTION chat_ulid_time(ms bigint) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  result text := '';
  rest bigint := ms;
BEGIN
  FOR i IN 1..10 LOOP
    result := substr(alphabet, (rest % 32)::integer + 1, 1) || result;
    rest := rest / 32;
  END LOOP;
  RETURN result;
END
$$;
