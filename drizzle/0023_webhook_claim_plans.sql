-- The worker's claim and result functions (0021) planned once per connection and committed
-- without waiting for the WAL flush (src/delivery/queue.ts explains both):
--  * plan_cache_mode = force_generic_plan: PL/pgSQL otherwise re-plans these CTE chains on
--    every call (custom plans), which cost more than running them; enable_seqscan and
--    enable_bitmapscan off: every row they touch is found by key or by an endpoint's range of
--    an index, and a plan made while the table was small must not scan it once it has grown.
--    Plain index scans also mark dead entries of the claimed index as dead for later scans.
--  * synchronous_commit = off for the calling transaction: a claim or a result lost in a crash
--    (the last fraction of a second) is sent again under the same delivery id, which
--    at-least-once delivery allows; the fan-out that makes the deliveries stays synchronous.
CREATE OR REPLACE FUNCTION webhook_claim(p_limit integer, p_per_endpoint integer, p_lease_ms integer, p_token text,
                                         p_answered text[])
RETURNS TABLE (id text, organization_id text, endpoint_id text, event text, body text, attempt_count integer,
               url text, secret_enc text, previous_secret_enc text, previous_valid boolean)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off AS $$
#variable_conflict use_column
DECLARE
  locked text[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  -- Endpoints dealt round-robin over organizations (each one's first before anyone's second).
  locked := ARRAY(
    SELECT e.id FROM webhook_endpoints e
    WHERE e.id IN (
      SELECT t.id FROM (
        SELECT c.id, row_number() OVER (PARTITION BY c.organization_id ORDER BY random()) AS turn
        FROM webhook_endpoints c
        CROSS JOIN LATERAL (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.endpoint_id = c.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
            AND (d.locked_until IS NULL OR d.locked_until < now())
          LIMIT 1) due
        WHERE c.active AND (c.paused_until IS NULL OR c.paused_until <= now())
          AND (SELECT count(*) FROM webhook_deliveries f
               WHERE f.endpoint_id = c.id AND f.claim_token IS NOT NULL AND f.locked_until > now()
                 AND f.id <> ALL(p_answered)) < p_per_endpoint
          AND (c.rate_limit_per_second IS NULL OR least(c.rate_limit_per_second::float8,
                 COALESCE(c.rate_tokens, c.rate_limit_per_second::float8)
                 + c.rate_limit_per_second * extract(epoch FROM now() - COALESCE(c.rate_refilled_at, now()))) >= 1)
      ) t
      ORDER BY t.turn, random()
      LIMIT p_limit)
    FOR NO KEY UPDATE SKIP LOCKED);
  IF cardinality(locked) = 0 THEN
    RETURN;
  END IF;
  -- Fresh snapshot: room per endpoint (cap minus in flight, rate tokens), its oldest due
  -- deliveries up to that room dealt round-robin within the organization, leased.
  RETURN QUERY
  WITH eps AS (
    SELECT e.id, e.organization_id,
           CASE WHEN e.rate_limit_per_second IS NULL THEN NULL ELSE least(e.rate_limit_per_second::float8,
             COALESCE(e.rate_tokens, e.rate_limit_per_second::float8)
             + e.rate_limit_per_second * extract(epoch FROM now() - COALESCE(e.rate_refilled_at, now()))) END AS tokens,
           p_per_endpoint - (SELECT count(*) FROM webhook_deliveries f
             WHERE f.endpoint_id = e.id AND f.claim_token IS NOT NULL AND f.locked_until > now()
               AND f.id <> ALL(p_answered))::int AS free
    FROM webhook_endpoints e
    WHERE e.id = ANY(locked) AND e.active AND (e.paused_until IS NULL OR e.paused_until <= now())
  ), room AS (
    SELECT eps.id, eps.organization_id, eps.tokens,
           greatest(0, least(eps.free, COALESCE(floor(eps.tokens)::int, eps.free))) AS n
    FROM eps
  ), picks AS (
    -- Each endpoint's oldest due deliveries up to its room, locked as they are read: one
    -- range of webhook_deliveries_endpoint_due_idx each, and a delivery another worker has
    -- just claimed is skipped (SKIP LOCKED) or re-checked on its newest version.
    SELECT p.id, r.organization_id, row_number() OVER (PARTITION BY r.id ORDER BY p.next_attempt_at, p.id) AS rn
    FROM room r CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at
      FROM webhook_deliveries d
      WHERE d.endpoint_id = r.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
        AND (d.locked_until IS NULL OR d.locked_until < now())
      ORDER BY d.next_attempt_at, d.id
      LIMIT r.n
      FOR UPDATE OF d SKIP LOCKED
    ) p
  ), chosen AS (
    SELECT s.id FROM (
      SELECT picks.id, row_number() OVER (PARTITION BY picks.organization_id ORDER BY picks.rn, random()) AS seq
      FROM picks
    ) s
    ORDER BY s.seq, random()
    LIMIT p_limit
  ), claimed AS (
    UPDATE webhook_deliveries d
    SET locked_until = now() + make_interval(secs => p_lease_ms::double precision / 1000), claim_token = p_token
    FROM webhook_endpoints e
    -- An array of keys: one primary-key probe each, whatever the statistics say.
    WHERE d.id = ANY(ARRAY(SELECT chosen.id FROM chosen)) AND e.id = d.endpoint_id
    RETURNING d.id, d.organization_id, d.endpoint_id, d.event, d.body, d.attempt_count, e.url, e.secret_enc,
              e.previous_secret_enc,
              (e.previous_secret_expires_at IS NOT NULL AND e.previous_secret_expires_at > now()) AS previous_valid
  ), spent AS (
    UPDATE webhook_endpoints e
    SET rate_tokens = r.tokens - c.n, rate_refilled_at = now()
    FROM room r, (SELECT claimed.endpoint_id, count(*) AS n FROM claimed GROUP BY claimed.endpoint_id) c
    WHERE e.id = r.id AND c.endpoint_id = r.id AND r.tokens IS NOT NULL
  )
  SELECT * FROM claimed;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhook_record_successes(
  p_ids text[], p_tokens text[], p_orgs text[], p_attempt_ids text[], p_attempted_at timestamptz[],
  p_status_codes integer[], p_durations integer[], p_bodies text[])
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  WITH input (id, token, org, attempt_id, attempted_at, status_code, duration_ms, response_body) AS (
    SELECT * FROM unnest(p_ids, p_tokens, p_orgs, p_attempt_ids, p_attempted_at, p_status_codes, p_durations, p_bodies)
  ), log AS (
    INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
    SELECT i.attempt_id, i.org, i.id, i.attempted_at, i.status_code, i.duration_ms, NULL, i.response_body
    FROM input i WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = i.id)
  ), upd AS (
    UPDATE webhook_deliveries d
    SET status = 'succeeded', attempt_count = d.attempt_count + 1, locked_until = NULL, claim_token = NULL,
        last_status_code = i.status_code, last_error = NULL, last_attempt_at = i.attempted_at,
        succeeded_at = now(), updated_at = now()
    FROM input i
    WHERE d.id = i.id AND d.claim_token = i.token
    RETURNING d.id, d.endpoint_id
  ), ep AS (
    UPDATE webhook_endpoints e SET consecutive_failures = 0, updated_at = now()
    WHERE e.id IN (SELECT upd.endpoint_id FROM upd) AND e.consecutive_failures <> 0
  )
  SELECT upd.id FROM upd;
END $$;
