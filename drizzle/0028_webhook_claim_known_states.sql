-- A claim no longer looks up the deliveries it already knows the state of. Each claim checked
-- every claim listed on the endpoint row against its delivery (one key probe each, in both of
-- its statements): with 32 in flight that was 64 probes, about a third of the database's time
-- per call in the webhook bench, and nearly all of them were the calling worker's own claims.
-- Two new arguments, both empty by default:
--   * `p_done`: deliveries whose result this same transaction has just written
--     (webhook_record_and_claim passes what its record step applied). They are over: dropped
--     from the list without a probe.
--   * `p_held`: the caller's own claims whose result it has not written yet (its requests under
--     way and its answered ones). They are in flight while their lease holds, without a probe.
--     At worst the caller's result for one has just committed on another connection: it then
--     counts once more than it should until the next claim finds it over, never less.
-- `p_answered` keeps its meaning (held, and not counted against the cap) and is taken as held.
-- Every other listed claim, another worker's, is probed as before.
-- The 4-argument webhook_claim becomes the 6-argument one with the two new ones defaulting to
-- empty, so a call with four arguments means what it meant; webhook_record_and_claim gains
-- `p_held`.
DROP FUNCTION webhook_claim(integer, integer, integer, text[]);
--> statement-breakpoint
CREATE FUNCTION webhook_claim(p_limit integer, p_per_endpoint integer, p_lease_ms integer, p_answered text[],
                              p_done text[] DEFAULT '{}', p_held text[] DEFAULT '{}')
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
        -- Its claims in flight: listed, the lease holding, and either one the caller holds
        -- or the delivery still as it was claimed (one key probe each).
        -- (OFFSET 0: computed once per endpoint, not once for each of its two uses.)
        CROSS JOIN LATERAL (
          SELECT ARRAY(
            SELECT l.id FROM unnest(c.inflight_ids, c.inflight_due, c.inflight_until) AS l(id, due, until)
            WHERE l.until > now() AND l.id <> ALL(p_done)
              AND (l.id = ANY(p_held) OR l.id = ANY(p_answered) OR EXISTS (
                SELECT 1 FROM webhook_deliveries f
                WHERE f.id = l.id AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due))) AS ids
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
           -- Positions in the lists of the claims still in flight (as above); the others are
           -- over and are dropped from the lists below.
           ARRAY(SELECT l.n::int FROM unnest(e.inflight_ids, e.inflight_due, e.inflight_until) WITH ORDINALITY
                   AS l(id, due, until, n)
                 WHERE l.until > now() AND l.id <> ALL(p_done)
                   AND (l.id = ANY(p_held) OR l.id = ANY(p_answered) OR EXISTS (
                     SELECT 1 FROM webhook_deliveries f
                     WHERE f.id = l.id AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due))) AS live
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
--> statement-breakpoint
-- As in 0026, with the caller's held claims, and the results applied, handed to the claim. The
-- applied ids come back as one comma-separated text, no longer a text[]: the driver parses an
-- array character by character, about 1 µs of the worker's CPU per delivery.
DROP FUNCTION webhook_record_and_claim(json, integer, integer, integer, text[]);
--> statement-breakpoint
CREATE FUNCTION webhook_record_and_claim(p_results json, p_limit integer, p_per_endpoint integer,
                                         p_lease_ms integer, p_answered text[], p_held text[])
RETURNS TABLE (recorded text, id text, organization_id text, endpoint_id text, event text, body text,
               attempt_count integer, due text, url text, secret_enc text, previous_secret_enc text,
               previous_valid boolean)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
  done text[];
BEGIN
  done := ARRAY(SELECT r FROM webhook_record_successes(p_results) AS r);
  RETURN QUERY
  SELECT array_to_string(done, ','), NULL::text, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text,
         NULL::text, NULL::text, NULL::boolean;
  IF p_limit > 0 THEN
    RETURN QUERY SELECT NULL::text, c.*
                 FROM webhook_claim(p_limit, p_per_endpoint, p_lease_ms, p_answered, done, p_held) AS c;
  END IF;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION webhook_claim(integer, integer, integer, text[], text[], text[]),
  webhook_record_and_claim(json, integer, integer, integer, text[], text[]) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION webhook_claim(integer, integer, integer, text[], text[], text[]),
  webhook_record_and_claim(json, integer, integer, integer, text[], text[]) TO crm_platform;
