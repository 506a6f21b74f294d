-- Deletes up to p_limit rows of append rate windows that started before p_before_ms (so have
-- ended), skipping rows an append holds: a sweep never waits on an append, nor an append on a
-- sweep. Returns how many it deleted. Every API runs it now and then (rate-window.repository.ts).
CREATE OR REPLACE FUNCTION chat_sweep_append_rate_windows(p_before_ms bigint, p_limit integer)
RETURNS bigint
LANGUAGE sql AS $$
  WITH swept AS (
    DELETE FROM append_rate_windows
    WHERE ctid IN (
      SELECT ctid FROM append_rate_windows WHERE window_start_ms < p_before_ms
      LIMIT p_limit FOR UPDATE SKIP LOCKED
    )
    RETURNING 1
  )
  SELECT count(*) FROM swept
$$;
