-- The ULID after `id` within the same millisecond: its random part (last 16 characters) plus one, or
-- NULL when all 80 bits are set. The append function uses it to keep a room's message IDs in commit
-- order when appends share a millisecond (the rule of monotonic-ulid.ts, in SQL).
CREATE OR REPLACE FUNCTION chat_ulid_increment(id text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  alphabet constant text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  result text := id;
  i integer;
  digit integer;
BEGIN
  FOR i IN REVERSE 26..11 LOOP
    digit := strpos(alphabet, substr(result, i, 1)) - 1;
    IF digit < 31 THEN
      RETURN overlay(result PLACING substr(alphabet, digit + 2, 1) FROM i FOR 1);
    END IF;
    result := overlay(result PLACING '0' FROM i FOR 1);
  END LOOP;
  RETURN NULL;
END
$$;
