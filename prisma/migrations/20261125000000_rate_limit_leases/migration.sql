-- Rate-limit hits leased in advance (lib/rate-limit.ts): keyfob_rate_limit_hit counts p_hits hits at
-- once, all or none, on one shard with room for them all; an instance then spends them without a
-- round trip until the window ends. Counted when leased, so the budget's bound stays exact across
-- instances: a lease is taken only where the whole lease fits, and what an instance leaves unspent
-- at the window's end is lost (a lease is a small part of a shard's share). A lease no shard has
-- room for is refused without being counted; the caller then asks for a single hit, counted as before.
-- Shards are counted as 20261124040000_rate_limit_shards says; leases are only asked of sharded budgets.
DROP FUNCTION keyfob_rate_limit_hit(text, integer, integer, integer, double precision);

CREATE FUNCTION keyfob_rate_limit_hit(p_key text, p_max integer, p_window_seconds integer, p_shards integer, p_now double precision, p_hits integer)
RETURNS TABLE (allowed boolean, hits integer, previous_hits integer)
LANGUAGE plpgsql AS $$
DECLARE
  w bigint := floor(p_now / p_window_seconds);
  overlap double precision := 1 - (p_now / p_window_seconds - floor(p_now / p_window_seconds));
  expires timestamp := to_timestamp((w + 2) * p_window_seconds) AT TIME ZONE 'UTC';
  shard_keys text[] := CASE WHEN p_shards = 1 THEN ARRAY[p_key] ELSE ARRAY(SELECT p_key || '#' || g FROM generate_series(0, p_shards - 1) g) END;
  first integer := floor(random() * p_shards);
  full_shards text[] := '{}';
  held boolean;
  busy boolean;
  k text;
  share integer;
  current_hits integer;
  previous integer;
  r rate_limits%ROWTYPE;
BEGIN
  IF p_shards = 1 THEN
    -- A budget of one row: every hit counted, allowed while the estimate is within it.
    INSERT INTO rate_limits AS t (key, "window", hits, previous_hits, expires_at) VALUES (p_key, w, p_hits, 0, expires)
    ON CONFLICT (key) DO UPDATE SET
      previous_hits = CASE WHEN t."window" = w THEN t.previous_hits WHEN t."window" = w - 1 THEN t.hits ELSE 0 END,
      hits = CASE WHEN t."window" = w THEN t.hits + p_hits ELSE p_hits END,
      "window" = w, expires_at = expires
    RETURNING t.hits, t.previous_hits INTO current_hits, previous;
    RETURN QUERY SELECT previous * overlap + current_hits <= p_max, current_hits, previous;
    RETURN;
  END IF;
  -- Most hits: the first shard tried is free and has room, one statement.
  share := p_max / p_shards + CASE WHEN first < p_max % p_shards THEN 1 ELSE 0 END;
  UPDATE rate_limits t SET
    previous_hits = CASE WHEN t."window" = w THEN t.previous_hits WHEN t."window" = w - 1 THEN t.hits ELSE 0 END,
    hits = CASE WHEN t."window" = w THEN t.hits + p_hits ELSE p_hits END,
    "window" = w, expires_at = expires
  FROM (SELECT s.key FROM rate_limits s WHERE s.key = shard_keys[first + 1] FOR UPDATE SKIP LOCKED) free
  WHERE t.key = free.key
    AND (CASE WHEN t."window" = w THEN t.previous_hits WHEN t."window" = w - 1 THEN t.hits ELSE 0 END) * overlap
        + (CASE WHEN t."window" = w THEN t.hits ELSE 0 END) + p_hits <= share;
  IF FOUND THEN
    RETURN QUERY SELECT true, 0, 0;
    RETURN;
  END IF;
  -- A shard held by another hit is free again once that hit's statement ends: about a millisecond.
  FOR attempt IN 1 .. 200 LOOP
    held := false;
    FOR i IN 0 .. p_shards - 1 LOOP
      k := shard_keys[(first + i) % p_shards + 1];
      CONTINUE WHEN k = ANY (full_shards);
      share := p_max / p_shards + CASE WHEN (first + i) % p_shards < p_max % p_shards THEN 1 ELSE 0 END;
      busy := false;
      SELECT * INTO r FROM rate_limits t WHERE t.key = k;
      IF NOT FOUND THEN
        -- A new shard, this hit's own until it ends.
        INSERT INTO rate_limits (key, "window", hits, previous_hits, expires_at)
          VALUES (k, w, p_hits, 0, expires) ON CONFLICT (key) DO NOTHING;
        IF FOUND THEN
          RETURN QUERY SELECT true, 0, 0;
          RETURN;
        END IF;
        held := true;
        CONTINUE;
      END IF;
      -- First as last seen, then as it is under the lock.
      FOR pass IN 1 .. 2 LOOP
        current_hits := CASE WHEN r."window" = w THEN r.hits ELSE 0 END;
        previous := CASE WHEN r."window" = w THEN r.previous_hits WHEN r."window" = w - 1 THEN r.hits ELSE 0 END;
        EXIT WHEN previous * overlap + current_hits + p_hits > share;
        IF pass = 2 THEN
          UPDATE rate_limits t SET "window" = w, hits = current_hits + p_hits, previous_hits = previous, expires_at = expires WHERE t.key = k;
          RETURN QUERY SELECT true, 0, 0;
          RETURN;
        END IF;
        SELECT * INTO r FROM rate_limits t WHERE t.key = k FOR UPDATE SKIP LOCKED;
        busy := NOT FOUND;
        EXIT WHEN busy;
      END LOOP;
      IF busy THEN
        held := true;
      ELSE
        full_shards := full_shards || k;
      END IF;
    END LOOP;
    EXIT WHEN NOT held;
    PERFORM pg_sleep(0.001);
  END LOOP;
  -- A lease that no shard has room for is not a request: refused uncounted, the caller asks for one hit.
  IF p_hits > 1 THEN
    RETURN QUERY SELECT false, 0, 0;
    RETURN;
  END IF;
  -- Refused: every shard was seen full (or, very rarely, stayed held for 200 attempts). Counted on a
  -- full shard this hit holds or can take at once; failing that it holds none, so it may wait.
  k := (SELECT s.key FROM rate_limits s WHERE s.key = ANY (full_shards) LIMIT 1 FOR UPDATE SKIP LOCKED);
  k := coalesce(k, full_shards[1 + floor(random() * cardinality(full_shards))::integer]);
  UPDATE rate_limits t SET
    previous_hits = CASE WHEN t."window" = w THEN t.previous_hits WHEN t."window" = w - 1 THEN t.hits ELSE 0 END,
    hits = CASE WHEN t."window" = w THEN t.hits + 1 ELSE 1 END,
    "window" = w, expires_at = expires
  WHERE t.key = k;
  RETURN QUERY
    SELECT false,
           coalesce(sum(CASE WHEN t."window" = w THEN t.hits ELSE 0 END), 0)::integer,
           coalesce(sum(CASE WHEN t."window" = w THEN t.previous_hits WHEN t."window" = w - 1 THEN t.hits ELSE 0 END), 0)::integer
    FROM rate_limits t WHERE t.key = ANY (shard_keys);
END
$$;
