-- Claims read an endpoint's due deliveries from just after the newest one the last claim took,
-- no longer from 250 ms before the oldest one it picked. The auto_explain of a claim under load
-- (the webhook bench) showed each claim stepping over about 230 index entries whose heap rows it
-- then had to visit: deliveries sent in the last 250 ms (about a thousand at 5,000 a second;
-- the ones already vacuumable are skipped as dead without a visit) and the claim's own in flight.
-- Each delivery claimed paid about ten such visits.
--
-- The 250 ms margin was there for a fan-out that commits after another with a later
-- timestamp (two workers fanning out at once): its deliveries fall due behind where claims
-- read. They are still found, by a read from 250 ms before the last position, which a claim
-- now makes when the last such read (`due_margin_at`) is 100 ms old; and anything older (a
-- lease that ran out) by the read from the start every 2 s, as before. The position is the
-- newest claimed delivery's (next_attempt_at, id): every due delivery before it was claimed
-- by then, or in flight, or done.
--
-- The claim's first statement also counted each endpoint's in-flight deliveries twice (the
-- planner copied the subquery into both of its uses); it now does so once.
ALTER TABLE "webhook_endpoints" ADD COLUMN "due_from_id" text;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "due_margin_at" timestamp with time zone;
--> statement-breakpoint
-- Where a claim starts reading an endpoint's due deliveries: from the start when the last such
-- read is 2 s old (kind 'start'); from 250 ms before the last position when the last margin
-- read is 100 ms old ('margin'); otherwise just after the last position ('exact'). Rows are
-- read where (next_attempt_at, id) > (at, id).
CREATE FUNCTION webhook_due_start(p_from timestamptz, p_from_id text, p_margin_at timestamptz,
                                  p_scanned_at timestamptz)
RETURNS TABLE (at timestamptz, id text, kind text)
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN p_from IS NULL OR p_scanned_at IS NULL OR p_scanned_at <= now() - interval '2 seconds'
                THEN '-infinity'::timestamptz
              WHEN p_margin_at IS NULL OR p_margin_at <= now() - interval '100 milliseconds'
                THEN p_from - interval '250 milliseconds'
              ELSE p_from END,
         CASE WHEN p_from IS NOT NULL AND p_scanned_at > now() - interval '2 seconds'
                   AND p_margin_at > now() - interval '100 milliseconds' THEN COALESCE(p_from_id, '') ELSE '' END,
         CASE WHEN p_from IS NULL OR p_scanned_at IS NULL OR p_scanned_at <= now() - interval '2 seconds' THEN 'start'
              WHEN p_margin_at IS NULL OR p_margin_at <= now() - interval '100 milliseconds' THEN 'margin'
              ELSE 'exact' END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhook_claim(p_limit integer, p_per_endpoint integer, p_lease_ms integer, p_answered text[])
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
        -- (OFFSET 0: computed once per endpoint, not once for each of its two uses.)
        CROSS JOIN LATERAL (
          SELECT ARRAY(
            SELECT l.id FROM unnest(c.inflight_ids, c.inflight_due, c.inflight_until) AS l(id, due, until)
            JOIN webhook_deliveries f ON f.id = l.id
            WHERE l.until > now() AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due) AS ids
          OFFSET 0
        ) busy
        CROSS JOIN LATERAL webhook_due_start(c.due_from, c.due_from_id, c.due_margin_at, c.due_scanned_at) AS h
        CROSS JOIN LATERAL (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.endpoint_id = c.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
            AND (d.next_attempt_at, d.id) > (h.at, h.id)
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
           h.at AS hint_at, h.id AS hint_id, h.kind AS hint_kind,
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
    CROSS JOIN LATERAL webhook_due_start(e.due_from, e.due_from_id, e.due_margin_at, e.due_scanned_at) AS h
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
        AND (d.next_attempt_at, d.id) > (r.hint_at, r.hint_id) AND d.id <> ALL(r.busy)
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
    -- after the newest delivery this one claimed; the time of a margin read or of a read
    -- from the start).
    UPDATE webhook_endpoints e
    SET inflight_ids = r.busy || c.ids,
        inflight_due = ARRAY(SELECT r.inflight_due[k] FROM unnest(r.live) AS k) || c.dues,
        inflight_until = ARRAY(SELECT r.inflight_until[k] FROM unnest(r.live) AS k)
          || array_fill(now() + make_interval(secs => p_lease_ms::double precision / 1000), ARRAY[c.n]),
        rate_tokens = CASE WHEN r.tokens IS NULL THEN e.rate_tokens ELSE r.tokens - c.n END,
        rate_refilled_at = CASE WHEN r.tokens IS NULL THEN e.rate_refilled_at ELSE now() END,
        due_from = c.newest_at,
        due_from_id = c.newest_id,
        due_margin_at = CASE WHEN r.hint_kind <> 'exact' THEN now() ELSE e.due_margin_at END,
        due_scanned_at = CASE WHEN r.hint_kind = 'start' THEN now() ELSE e.due_scanned_at END
    FROM room r,
         (SELECT chosen.endpoint_id, count(*)::int AS n, array_agg(chosen.id) AS ids,
                 array_agg(chosen.next_attempt_at) AS dues,
                 (array_agg(chosen.next_attempt_at ORDER BY chosen.next_attempt_at DESC, chosen.id DESC))[1] AS newest_at,
                 (array_agg(chosen.id ORDER BY chosen.next_attempt_at DESC, chosen.id DESC))[1] AS newest_id
          FROM chosen GROUP BY chosen.endpoint_id) c
    WHERE e.id = r.id AND c.endpoint_id = r.id
  )
  SELECT d.id, d.organization_id, d.endpoint_id, d.event, d.body, d.attempt_count, d.next_attempt_at::text,
         e.url, e.secret_enc, e.previous_secret_enc,
         (e.previous_secret_expires_at IS NOT NULL AND e.previous_secret_expires_at > now())
  FROM webhook_deliveries d
  JOIN webhook_endpoints e ON e.id = d.endpoint_id
  -- An array of keys: one primary-key probe each, whatever the statistics say.
  WHERE d.id = ANY(ARRAY(SELECT chosen.id FROM chosen));
END $$;
