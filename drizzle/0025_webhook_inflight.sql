-- A claim counted an endpoint's deliveries in flight by scanning
-- webhook_deliveries_endpoint_claimed_idx over `locked_until > now()`: with a 30 s lease that
-- range holds an entry for every delivery claimed in the last 30 s, finished or not (a
-- finished one is a dead row until VACUUM), and the count ran three times per claim. On the
-- webhook bench the claim's buffer reads per delivery grew by half within a minute of
-- traffic; at a steady 1,000 deliveries a second it would walk 30,000 entries each time.
--
-- Now each endpoint row lists its claims in flight (`inflight_ids`, written only by the
-- claim, under the endpoint's row lock that every claim already takes): a claim counts the
-- listed deliveries whose lease still holds and whose result is not written, one primary-key
-- probe each (at most the cap, plus those finished since the last claim), drops the others
-- from the list and adds its own. Results do not touch the list, so recording stays off the
-- endpoint row. The claimed index is read by nothing now and is dropped: a claim writes one
-- index entry fewer per delivery.
--
-- The same holds at the front of an endpoint's range of webhook_deliveries_endpoint_due_idx:
-- every delivery sent since the last VACUUM left a dead entry there, older than anything
-- still due, and each claim read through all of them twice (the due check and the pick;
-- about 400 index pages per claim after 17,000 deliveries on the bench). So the endpoint row
-- also keeps where its next claim may start (`due_from`: 250 ms before the oldest delivery
-- the last claim picked) and the claim reads from there. A delivery that becomes due behind
-- that point (a lease that ran out, a fan-out that committed more than 250 ms after it
-- began) is found by the next claim that reads from the start, which happens when the last
-- such read (`due_scanned_at`) is 2 seconds old: it waits at most that much longer.
ALTER TABLE "webhook_endpoints" ADD COLUMN "inflight_ids" text[] DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "due_from" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "due_scanned_at" timestamp with time zone;
--> statement-breakpoint
-- Claims made before this migration are listed, so the cap holds across it.
UPDATE webhook_endpoints e SET inflight_ids = ARRAY(
  SELECT d.id FROM webhook_deliveries d
  WHERE d.endpoint_id = e.id AND d.claim_token IS NOT NULL AND d.locked_until > now());
--> statement-breakpoint
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
            AND d.next_attempt_at >= COALESCE(CASE WHEN c.due_scanned_at > now() - interval '2 seconds' THEN c.due_from END, '-infinity')
            AND (d.locked_until IS NULL OR d.locked_until < now())
          LIMIT 1) due
        WHERE c.active AND (c.paused_until IS NULL OR c.paused_until <= now())
          AND (SELECT count(*) FROM webhook_deliveries f
               WHERE f.id = ANY(c.inflight_ids) AND f.claim_token IS NOT NULL AND f.locked_until > now()
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
  WITH eps AS MATERIALIZED (
    SELECT e.id, e.organization_id,
           COALESCE(CASE WHEN e.due_scanned_at > now() - interval '2 seconds' THEN e.due_from END,
                    '-infinity') AS hint,
           CASE WHEN e.rate_limit_per_second IS NULL THEN NULL ELSE least(e.rate_limit_per_second::float8,
             COALESCE(e.rate_tokens, e.rate_limit_per_second::float8)
             + e.rate_limit_per_second * extract(epoch FROM now() - COALESCE(e.rate_refilled_at, now()))) END AS tokens,
           -- Still in flight: the endpoint's recorded claims whose lease holds and whose result
           -- is not written (a finished or expired one is dropped below), one key probe each.
           ARRAY(SELECT f.id FROM webhook_deliveries f
             WHERE f.id = ANY(e.inflight_ids) AND f.claim_token IS NOT NULL AND f.locked_until > now()) AS inflight
    FROM webhook_endpoints e
    WHERE e.id = ANY(locked) AND e.active AND (e.paused_until IS NULL OR e.paused_until <= now())
  ), room AS (
    SELECT eps.id, eps.organization_id, eps.tokens, eps.inflight, eps.hint, f.free,
           greatest(0, least(f.free, COALESCE(floor(eps.tokens)::int, f.free))) AS n
    FROM eps CROSS JOIN LATERAL (
      SELECT p_per_endpoint - (SELECT count(*) FROM unnest(eps.inflight) AS i(id) WHERE i.id <> ALL(p_answered))::int
    ) AS f(free)
  ), picks AS (
    -- Each endpoint's oldest due deliveries up to its room, locked as they are read: one
    -- range of webhook_deliveries_endpoint_due_idx each, and a delivery another worker has
    -- just claimed is skipped (SKIP LOCKED) or re-checked on its newest version.
    SELECT p.id, r.id AS endpoint_id, r.organization_id, p.next_attempt_at,
           row_number() OVER (PARTITION BY r.id ORDER BY p.next_attempt_at, p.id) AS rn
    FROM room r CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at
      FROM webhook_deliveries d
      WHERE d.endpoint_id = r.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
        AND d.next_attempt_at >= r.hint
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
  ), tracked AS (
    -- Written back on the endpoint row (locked above), one update per endpoint: its claims
    -- in flight (those still in flight plus these), the rate tokens spent, and where its
    -- next claim may start reading the due index (just before the oldest delivery this
    -- one picked; after a read from the start, the time of that read).
    UPDATE webhook_endpoints e
    SET inflight_ids = r.inflight || c.ids,
        rate_tokens = CASE WHEN r.tokens IS NULL THEN e.rate_tokens ELSE r.tokens - c.n END,
        rate_refilled_at = CASE WHEN r.tokens IS NULL THEN e.rate_refilled_at ELSE now() END,
        due_from = o.oldest - interval '250 milliseconds',
        due_scanned_at = CASE WHEN r.hint = '-infinity' THEN now() ELSE e.due_scanned_at END
    FROM room r,
         (SELECT claimed.endpoint_id, count(*) AS n, array_agg(claimed.id) AS ids
          FROM claimed GROUP BY claimed.endpoint_id) c,
         (SELECT picks.endpoint_id, min(picks.next_attempt_at) AS oldest FROM picks GROUP BY picks.endpoint_id) o
    WHERE e.id = r.id AND c.endpoint_id = r.id AND o.endpoint_id = r.id
  )
  SELECT * FROM claimed;
END $$;
--> statement-breakpoint
DROP INDEX IF EXISTS "webhook_deliveries_endpoint_claimed_idx";
