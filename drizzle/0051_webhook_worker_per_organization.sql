-- The webhook worker on Citus (docs/scaling.md, "Work across organizations, once distributed").
-- Citus locks rows only within one shard, so the claim across organizations (webhook_claim: one
-- statement locks due endpoints of every organization FOR NO KEY UPDATE SKIP LOCKED) and the
-- successes written in bulk for several organizations at once (webhook_record_successes: an
-- UPDATE … FROM a JSON parameter over every shard) are refused there. These two functions are the
-- same work for ONE organization, every table named with `organization_id = p_org`, so that Citus
-- routes each statement whole to the organization's shard. The worker calls them, one
-- organization at a time, when the database is Citus (src/delivery/queue.ts); on PostgreSQL and
-- PGlite it keeps the calls across organizations, one round trip for every organization.
--
-- Plans are made per call (force_custom_plan): Citus prunes to one shard only with the
-- organization's value in hand, and a generic plan has a placeholder instead of it.
CREATE FUNCTION webhook_claim_org(p_org text, p_limit integer, p_per_endpoint integer, p_lease_ms integer, p_answered text[], p_done text[] DEFAULT '{}'::text[], p_held text[] DEFAULT '{}'::text[])
 RETURNS TABLE(id text, organization_id text, endpoint_id text, event text, body text, attempt_count integer, due text, url text, secret_enc text, previous_secret_enc text, previous_valid boolean)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'public', 'pg_temp'
 SET plan_cache_mode TO 'force_custom_plan'
 SET jit TO 'off'
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
AS $$
#variable_conflict use_column
DECLARE
  -- The transaction's time as a value: Citus refuses now() inside a CASE or COALESCE of an UPDATE.
  v_now timestamptz := now();
  locked text[];
  locked_orgs text[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  -- Endpoints dealt round-robin over organizations (each one's first before anyone's second).
  SELECT array_agg(x.id), array_agg(x.organization_id) INTO locked, locked_orgs FROM (
    SELECT e.id, e.organization_id FROM webhook_endpoints e
    WHERE e.organization_id = p_org AND (e.organization_id, e.id) IN (
      SELECT t.organization_id, t.id FROM (
        SELECT c.id, c.organization_id, row_number() OVER (PARTITION BY c.organization_id ORDER BY random()) AS turn
        FROM webhook_endpoints c
        -- Its claims in flight: listed, the lease holding, and either one the caller holds
        -- or the delivery still as it was claimed (one key probe each).
        -- (OFFSET 0: computed once per endpoint, not once for each of its two uses.)
        CROSS JOIN LATERAL (
          SELECT ARRAY(
            SELECT l.id FROM unnest(c.inflight_ids, c.inflight_due, c.inflight_until) AS l(id, due, until)
            WHERE l.until > v_now AND l.id <> ALL(p_done)
              AND (l.id = ANY(p_held) OR l.id = ANY(p_answered) OR EXISTS (
                SELECT 1 FROM webhook_deliveries f
                WHERE f.organization_id = p_org AND f.id = l.id
                  AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due))) AS ids
          OFFSET 0
        ) busy
        CROSS JOIN LATERAL webhook_due_start(c.due_from, c.due_from_id, c.due_margin_at, c.due_scanned_at) AS h
        CROSS JOIN LATERAL (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.organization_id = p_org AND d.endpoint_id = c.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= v_now
            AND (d.next_attempt_at, d.id) > (h.at, h.id)
            AND d.id <> ALL(busy.ids)
          LIMIT 1) due
        WHERE c.organization_id = p_org AND c.active AND (c.paused_until IS NULL OR c.paused_until <= v_now)
          AND (SELECT count(*) FROM unnest(busy.ids) AS b(id) WHERE b.id <> ALL(p_answered)) < p_per_endpoint
          AND (c.rate_limit_per_second IS NULL OR least(c.rate_limit_per_second::float8,
                 COALESCE(c.rate_tokens, c.rate_limit_per_second::float8)
                 + c.rate_limit_per_second * extract(epoch FROM v_now - COALESCE(c.rate_refilled_at, v_now))) >= 1)
      ) t
      ORDER BY t.turn, random()
      LIMIT p_limit)
    FOR NO KEY UPDATE SKIP LOCKED) x;
  IF locked IS NULL THEN
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
             + e.rate_limit_per_second * extract(epoch FROM v_now - COALESCE(e.rate_refilled_at, v_now))) END AS tokens,
           -- Positions in the lists of the claims still in flight (as above); the others are
           -- over and are dropped from the lists below.
           ARRAY(SELECT l.n::int FROM unnest(e.inflight_ids, e.inflight_due, e.inflight_until) WITH ORDINALITY
                   AS l(id, due, until, n)
                 WHERE l.until > v_now AND l.id <> ALL(p_done)
                   AND (l.id = ANY(p_held) OR l.id = ANY(p_answered) OR EXISTS (
                     SELECT 1 FROM webhook_deliveries f
                     WHERE f.organization_id = p_org AND f.id = l.id
                       AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due))) AS live
    FROM unnest(locked_orgs, locked) AS k(org, eid)
    JOIN webhook_endpoints e ON e.organization_id = p_org AND e.id = k.eid
    CROSS JOIN LATERAL webhook_due_start(e.due_from, e.due_from_id, e.due_margin_at, e.due_scanned_at) AS h
    WHERE e.active AND (e.paused_until IS NULL OR e.paused_until <= v_now)
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
      WHERE d.organization_id = p_org AND d.endpoint_id = r.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= v_now
        AND (d.next_attempt_at, d.id) > (r.hint_at, r.hint_id) AND d.id <> ALL(r.busy)
      ORDER BY d.next_attempt_at, d.id
      LIMIT r.n
    ) p
  ), chosen AS (
    SELECT s.id, s.endpoint_id, s.organization_id, s.next_attempt_at FROM (
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
          || array_fill(v_now + make_interval(secs => p_lease_ms::double precision / 1000), ARRAY[c.n]),
        rate_tokens = CASE WHEN r.tokens IS NULL THEN e.rate_tokens ELSE r.tokens - c.n END,
        rate_refilled_at = CASE WHEN r.tokens IS NULL THEN e.rate_refilled_at ELSE v_now END,
        due_from = c.newest_at,
        due_from_id = c.newest_id,
        due_margin_at = CASE WHEN r.hint_kind <> 'exact' THEN v_now ELSE e.due_margin_at END,
        due_scanned_at = CASE WHEN r.hint_kind = 'start' THEN v_now ELSE e.due_scanned_at END
    FROM room r,
         (SELECT chosen.endpoint_id, count(*)::int AS n, array_agg(chosen.id) AS ids,
                 array_agg(chosen.next_attempt_at) AS dues,
                 (array_agg(chosen.next_attempt_at ORDER BY chosen.next_attempt_at DESC, chosen.id DESC))[1] AS newest_at,
                 (array_agg(chosen.id ORDER BY chosen.next_attempt_at DESC, chosen.id DESC))[1] AS newest_id
          FROM chosen GROUP BY chosen.endpoint_id) c
    WHERE e.organization_id = p_org AND e.id = r.id AND c.endpoint_id = r.id
  )
  SELECT d.id, d.organization_id, d.endpoint_id, d.event, d.body, d.attempt_count, d.next_attempt_at::text,
         e.url, e.secret_enc, e.previous_secret_enc,
         (e.previous_secret_expires_at IS NOT NULL AND e.previous_secret_expires_at > v_now)
  -- One primary-key probe per chosen delivery, and per its endpoint, each by (organization, id).
  FROM chosen ck
  JOIN webhook_deliveries d ON d.organization_id = p_org AND d.id = ck.id
  JOIN webhook_endpoints e ON e.organization_id = p_org AND e.id = d.endpoint_id;
END $$;
--> statement-breakpoint
-- The successes of one organization's deliveries (as webhook_record_successes, 0048). The one
-- INSERT, the attempt row of a result whose claim was lost (rare: two workers' results for one
-- delivery), is one `INSERT … VALUES` per such result: Citus refuses an INSERT … SELECT from a
-- function's rows into a distributed table run through the coordinator, and routes a VALUES row
-- naming the organization to its shard.
CREATE FUNCTION webhook_record_successes_org(p_org text, p_results json)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp
  SET plan_cache_mode = force_custom_plan SET enable_seqscan = off SET enable_bitmapscan = off
  SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
DECLARE
  applied text[];
  lost record;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  WITH input AS MATERIALIZED (
    SELECT x.id, x.due, x.attempt_id, to_timestamp(x.attempted_ms / 1000.0) AS attempted_at,
           x.status_code, x.duration_ms, x.response_body
    FROM json_to_recordset(p_results) AS x(id text, due timestamptz, attempt_id text,
      attempted_ms double precision, status_code integer, duration_ms integer, response_body text)
  ), upd AS (
    UPDATE webhook_deliveries d
    SET status = 'succeeded', attempt_count = d.attempt_count + 1,
        last_status_code = i.status_code, last_error = NULL, last_attempt_at = i.attempted_at,
        success_attempt_id = i.attempt_id, success_duration_ms = i.duration_ms,
        success_response_body = i.response_body,
        succeeded_at = now(), updated_at = now()
    FROM input i
    WHERE d.organization_id = p_org AND d.id = i.id
      AND d.status NOT IN ('succeeded', 'dead') AND d.next_attempt_at = i.due
    RETURNING d.id
  )
  SELECT COALESCE(array_agg(upd.id), '{}') INTO applied FROM upd;
  UPDATE webhook_endpoints e SET consecutive_failures = 0, updated_at = now()
  WHERE e.organization_id = p_org AND e.consecutive_failures <> 0
    AND e.id IN (SELECT d.endpoint_id FROM webhook_deliveries d WHERE d.organization_id = p_org AND d.id = ANY(applied));
  -- The results that did not apply (the claim was lost) are logged as rows.
  FOR lost IN
    SELECT x.id, x.attempt_id, to_timestamp(x.attempted_ms / 1000.0) AS attempted_at, x.status_code, x.duration_ms,
           x.response_body
    FROM json_to_recordset(p_results) AS x(id text, attempt_id text, attempted_ms double precision,
      status_code integer, duration_ms integer, response_body text)
    WHERE x.id <> ALL(applied)
  LOOP
    IF EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.organization_id = p_org AND d.id = lost.id) THEN
      INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
      VALUES (lost.attempt_id, p_org, lost.id, lost.attempted_at, lost.status_code, lost.duration_ms, NULL, lost.response_body);
    END IF;
  END LOOP;
  RETURN QUERY SELECT unnest(applied);
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION webhook_claim_org(text, integer, integer, integer, text[], text[], text[]),
  webhook_record_successes_org(text, json) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION webhook_claim_org(text, integer, integer, integer, text[], text[], text[]),
  webhook_record_successes_org(text, json) TO crm_platform;
