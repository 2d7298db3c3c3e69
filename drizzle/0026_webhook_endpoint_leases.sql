-- A claim no longer writes the deliveries it claims. Until now it locked each one
-- (FOR UPDATE) and rewrote it with a lease (locked_until, claim_token): a new row version
-- per delivery, most of them with a new entry in every index of webhook_deliveries (the
-- pages are full, so few of those updates are HOT), and more dead entries at the front of
-- the due index for the next claims to step over. On the webhook bench that was about
-- 4.4 WAL records and 40 µs of the claim per delivery, before the result rewrote the row again.
--
-- The lease now lives on the endpoint row, which every claim already locks and rewrites
-- once per call: beside the ids of its claims in flight (`inflight_ids`, 0025) it keeps,
-- position by position, the `next_attempt_at` each delivery had when it was claimed
-- (`inflight_due`) and when that claim's lease runs out (`inflight_until`). A listed delivery
-- is in flight while its lease holds and it is still in the state it was claimed in:
-- pending or failed, due at the same instant. Every result changes that state (succeeded,
-- dead, or due again later), so a claim needs no word from the results to see which of
-- its endpoint's claims are over; it probes them by key, as before.
--
-- "Still as claimed" is written `status NOT IN ('succeeded', 'dead')`, not `IN ('pending',
-- 'failed')`: the latter matches the predicate of webhook_deliveries_endpoint_due_idx, and a
-- generic plan made while the table was small then reads that whole index instead of
-- probing the primary key.
--
-- Claims of one endpoint are serialised by the lock on its row, so a delivery listed as in
-- flight is skipped by every other claim without a lock of its own. A result applies only
-- when the delivery is still in the state it was claimed in (the `next_attempt_at` the claim
-- returned): the same guard the claim token gave, for a worker whose lease ran out and whose
-- delivery was claimed and recorded by another.
ALTER TABLE "webhook_endpoints" ADD COLUMN "inflight_due" timestamp with time zone[] DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "inflight_until" timestamp with time zone[] DEFAULT '{}' NOT NULL;
--> statement-breakpoint
-- Claims made before this migration keep their leases, so the cap holds across it.
UPDATE webhook_endpoints e SET (inflight_ids, inflight_due, inflight_until) = (
  SELECT COALESCE(array_agg(d.id ORDER BY d.id), '{}'), COALESCE(array_agg(d.next_attempt_at ORDER BY d.id), '{}'),
         COALESCE(array_agg(d.locked_until ORDER BY d.id), '{}')
  FROM webhook_deliveries d
  WHERE d.endpoint_id = e.id AND d.claim_token IS NOT NULL AND d.locked_until > now());
--> statement-breakpoint
DROP FUNCTION webhook_record_and_claim(text[], text[], text[], text[], timestamptz[], integer[], integer[], text[],
                                       integer, integer, integer, text, text[]);
--> statement-breakpoint
DROP FUNCTION webhook_record_successes(text[], text[], text[], text[], timestamptz[], integer[], integer[], text[]);
--> statement-breakpoint
DROP FUNCTION webhook_claim(integer, integer, integer, text, text[]);
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "locked_until";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP COLUMN "claim_token";
--> statement-breakpoint
-- Returns, with each claimed delivery, `due`: its next_attempt_at as text (to the
-- microsecond), which the caller hands back with the result.
CREATE FUNCTION webhook_claim(p_limit integer, p_per_endpoint integer, p_lease_ms integer, p_answered text[])
RETURNS TABLE (id text, organization_id text, endpoint_id text, event text, body text, attempt_count integer,
               due text, url text, secret_enc text, previous_secret_enc text, previous_valid boolean)
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
        -- Its claims in flight: listed, the lease holding, the delivery as it was claimed.
        CROSS JOIN LATERAL (
          SELECT ARRAY(
            SELECT l.id FROM unnest(c.inflight_ids, c.inflight_due, c.inflight_until) AS l(id, due, until)
            JOIN webhook_deliveries f ON f.id = l.id
            WHERE l.until > now() AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due) AS ids
        ) busy
        CROSS JOIN LATERAL (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.endpoint_id = c.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
            AND d.next_attempt_at >= COALESCE(CASE WHEN c.due_scanned_at > now() - interval '2 seconds' THEN c.due_from END, '-infinity')
            AND d.id <> ALL(busy.ids)
          LIMIT 1) due
        WHERE c.active AND (c.paused_until IS NULL OR c.paused_until <= now())
          AND (SELECT count(*) FROM unnest(busy.ids) AS b(id) WHERE b.id <> ALL(p_answered)) < p_per_endpoint
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
  -- deliveries up to that room dealt round-robin within the organization, leased on the
  -- endpoint row.
  RETURN QUERY
  WITH eps AS MATERIALIZED (
    SELECT e.id, e.organization_id, e.inflight_ids, e.inflight_due, e.inflight_until,
           COALESCE(CASE WHEN e.due_scanned_at > now() - interval '2 seconds' THEN e.due_from END,
                    '-infinity') AS hint,
           CASE WHEN e.rate_limit_per_second IS NULL THEN NULL ELSE least(e.rate_limit_per_second::float8,
             COALESCE(e.rate_tokens, e.rate_limit_per_second::float8)
             + e.rate_limit_per_second * extract(epoch FROM now() - COALESCE(e.rate_refilled_at, now()))) END AS tokens,
           -- Positions in the lists of the claims still in flight (one key probe each); the
           -- others are over and are dropped from the lists below.
           ARRAY(SELECT l.n::int FROM unnest(e.inflight_ids, e.inflight_due, e.inflight_until) WITH ORDINALITY
                   AS l(id, due, until, n)
                 JOIN webhook_deliveries f ON f.id = l.id
                 WHERE l.until > now() AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due) AS live
    FROM webhook_endpoints e
    WHERE e.id = ANY(locked) AND e.active AND (e.paused_until IS NULL OR e.paused_until <= now())
  ), room AS (
    SELECT eps.*, busy.ids AS busy, f.free,
           greatest(0, least(f.free, COALESCE(floor(eps.tokens)::int, f.free))) AS n
    FROM eps
    CROSS JOIN LATERAL (SELECT ARRAY(SELECT eps.inflight_ids[k] FROM unnest(eps.live) AS k)) AS busy(ids)
    CROSS JOIN LATERAL (
      SELECT p_per_endpoint - (SELECT count(*) FROM unnest(busy.ids) AS i(id) WHERE i.id <> ALL(p_answered))::int
    ) AS f(free)
  ), picks AS (
    -- Each endpoint's oldest due deliveries up to its room, past those in flight: one range
    -- of webhook_deliveries_endpoint_due_idx each. No row locks: no other claim reads this
    -- endpoint's deliveries while its row is locked.
    SELECT p.id, r.id AS endpoint_id, r.organization_id, p.next_attempt_at,
           row_number() OVER (PARTITION BY r.id ORDER BY p.next_attempt_at, p.id) AS rn
    FROM room r CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at
      FROM webhook_deliveries d
      WHERE d.endpoint_id = r.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
        AND d.next_attempt_at >= r.hint AND d.id <> ALL(r.busy)
      ORDER BY d.next_attempt_at, d.id
      LIMIT r.n
    ) p
  ), chosen AS (
    SELECT s.id, s.endpoint_id, s.next_attempt_at FROM (
      SELECT picks.*, row_number() OVER (PARTITION BY picks.organization_id ORDER BY picks.rn, random()) AS seq
      FROM picks
    ) s
    ORDER BY s.seq, random()
    LIMIT p_limit
  ), tracked AS (
    -- Written back on the endpoint row (locked above), one update per endpoint: its claims
    -- in flight (those still in flight plus these, each with its due time and lease), the
    -- rate tokens spent, and where its next claim may start reading the due index (just
    -- before the oldest delivery this one picked; after a read from the start, the time of
    -- that read).
    UPDATE webhook_endpoints e
    SET inflight_ids = r.busy || c.ids,
        inflight_due = ARRAY(SELECT r.inflight_due[k] FROM unnest(r.live) AS k) || c.dues,
        inflight_until = ARRAY(SELECT r.inflight_until[k] FROM unnest(r.live) AS k)
          || array_fill(now() + make_interval(secs => p_lease_ms::double precision / 1000), ARRAY[c.n]),
        rate_tokens = CASE WHEN r.tokens IS NULL THEN e.rate_tokens ELSE r.tokens - c.n END,
        rate_refilled_at = CASE WHEN r.tokens IS NULL THEN e.rate_refilled_at ELSE now() END,
        due_from = o.oldest - interval '250 milliseconds',
        due_scanned_at = CASE WHEN r.hint = '-infinity' THEN now() ELSE e.due_scanned_at END
    FROM room r,
         (SELECT chosen.endpoint_id, count(*)::int AS n, array_agg(chosen.id) AS ids,
                 array_agg(chosen.next_attempt_at) AS dues
          FROM chosen GROUP BY chosen.endpoint_id) c,
         (SELECT picks.endpoint_id, min(picks.next_attempt_at) AS oldest FROM picks GROUP BY picks.endpoint_id) o
    WHERE e.id = r.id AND c.endpoint_id = r.id AND o.endpoint_id = r.id
  )
  SELECT d.id, d.organization_id, d.endpoint_id, d.event, d.body, d.attempt_count, d.next_attempt_at::text,
         e.url, e.secret_enc, e.previous_secret_enc,
         (e.previous_secret_expires_at IS NOT NULL AND e.previous_secret_expires_at > now())
  FROM webhook_deliveries d
  JOIN webhook_endpoints e ON e.id = d.endpoint_id
  -- An array of keys: one primary-key probe each, whatever the statistics say.
  WHERE d.id = ANY(ARRAY(SELECT chosen.id FROM chosen));
END $$;
--> statement-breakpoint
-- A result applies while the delivery is in the state it was claimed in (`due`, as the
-- claim returned it); otherwise only the attempt is logged. The results come as one JSON
-- array of objects, one per attempt (id, due, org, attempt_id, attempted_at, status_code,
-- duration_ms, response_body): the caller's JSON.stringify costs a fraction of escaping
-- eight arrays element by element. The planner takes json_to_recordset for 100 rows and
-- would hash a whole index to join them; with hash and merge joins off, each result is
-- one primary-key probe.
CREATE FUNCTION webhook_record_successes(p_results json)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off
  SET enable_hashjoin = off SET enable_mergejoin = off AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  WITH input AS (
    SELECT * FROM json_to_recordset(p_results) AS x(id text, due timestamptz, org text, attempt_id text,
      attempted_at timestamptz, status_code integer, duration_ms integer, response_body text)
  ), log AS (
    INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
    SELECT i.attempt_id, i.org, i.id, i.attempted_at, i.status_code, i.duration_ms, NULL, i.response_body
    FROM input i WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = i.id)
  ), upd AS (
    UPDATE webhook_deliveries d
    SET status = 'succeeded', attempt_count = d.attempt_count + 1,
        last_status_code = i.status_code, last_error = NULL, last_attempt_at = i.attempted_at,
        succeeded_at = now(), updated_at = now()
    FROM input i
    WHERE d.id = i.id AND d.status NOT IN ('succeeded', 'dead') AND d.next_attempt_at = i.due
    RETURNING d.id, d.endpoint_id
  ), ep AS (
    UPDATE webhook_endpoints e SET consecutive_failures = 0, updated_at = now()
    WHERE e.id IN (SELECT upd.endpoint_id FROM upd) AND e.consecutive_failures <> 0
  )
  SELECT upd.id FROM upd;
END $$;
--> statement-breakpoint
-- A worker's writer records a batch of successes and, in the same call, claims deliveries
-- for the slots they freed (0021). The first row lists the results that applied
-- (`recorded`, the other columns NULL); each further row is a new claim (`recorded` NULL).
CREATE FUNCTION webhook_record_and_claim(p_results json, p_limit integer, p_per_endpoint integer,
                                         p_lease_ms integer, p_answered text[])
RETURNS TABLE (recorded text[], id text, organization_id text, endpoint_id text, event text, body text,
               attempt_count integer, due text, url text, secret_enc text, previous_secret_enc text,
               previous_valid boolean)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  RETURN QUERY
  SELECT ARRAY(SELECT r FROM webhook_record_successes(p_results) AS r), NULL::text, NULL::text, NULL::text,
         NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text, NULL::text, NULL::text, NULL::boolean;
  IF p_limit > 0 THEN
    RETURN QUERY SELECT NULL::text[], c.* FROM webhook_claim(p_limit, p_per_endpoint, p_lease_ms, p_answered) AS c;
  END IF;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION webhook_claim(integer, integer, integer, text[]), webhook_record_successes(json),
  webhook_record_and_claim(json, integer, integer, integer, text[]) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION webhook_claim(integer, integer, integer, text[]), webhook_record_successes(json),
  webhook_record_and_claim(json, integer, integer, integer, text[]) TO crm_platform;
