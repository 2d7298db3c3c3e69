-- Event → first attempt went from 6 ms to about 60 ms (p50) after 0035 (webhook bench). The
-- successes' function kept, for a worker of the version before 0035, a look-up of a delivery's
-- organization by its id alone. Never run (every worker sends the organization), it was still
-- planned: with the key (organization_id, id) it is a read of the whole primary-key index, whose
-- estimate grows with the table (about 230,000 at 35,000 deliveries). Past `jit_above_cost`
-- (100,000), every call of the function, and of webhook_record_and_claim which calls it, was
-- compiled by JIT first: 50 to 200 ms a call for a statement that runs in well under 1 ms.
--
-- The look-up is gone (every worker since 0035 sends the organization), and the worker's
-- functions run with JIT off: they are short index probes, never long enough for compiled
-- expressions to pay, and a plan's estimate must not turn them into a compile per call again.
CREATE OR REPLACE FUNCTION webhook_record_successes(p_results json)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off
  SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  WITH input AS (
    SELECT x.id, x.organization_id, x.due, x.attempt_id, to_timestamp(x.attempted_ms / 1000.0) AS attempted_at,
           x.status_code, x.duration_ms, x.response_body
    FROM json_to_recordset(p_results) AS x(id text, organization_id text, due timestamptz, attempt_id text,
      attempted_ms double precision, status_code integer, duration_ms integer, response_body text)
  ), upd AS (
    UPDATE webhook_deliveries d
    SET status = 'succeeded', attempt_count = d.attempt_count + 1,
        last_status_code = i.status_code, last_error = NULL, last_attempt_at = i.attempted_at,
        success_attempt_id = i.attempt_id, success_duration_ms = i.duration_ms,
        success_response_body = i.response_body,
        succeeded_at = now(), updated_at = now()
    FROM input i
    WHERE d.organization_id = i.organization_id AND d.id = i.id
      AND d.status NOT IN ('succeeded', 'dead') AND d.next_attempt_at = i.due
    RETURNING d.id, d.organization_id, d.endpoint_id
  ), log AS (
    -- The results that did not apply (the claim was lost) are logged as rows.
    INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
    SELECT i.attempt_id, d.organization_id, i.id, i.attempted_at, i.status_code, i.duration_ms, NULL, i.response_body
    FROM input i JOIN webhook_deliveries d ON d.organization_id = i.organization_id AND d.id = i.id
    WHERE i.id <> ALL(ARRAY(SELECT upd.id FROM upd))
  ), ep AS (
    UPDATE webhook_endpoints e SET consecutive_failures = 0, updated_at = now()
    FROM (SELECT DISTINCT upd.organization_id, upd.endpoint_id FROM upd) u
    WHERE e.organization_id = u.organization_id AND e.id = u.endpoint_id AND e.consecutive_failures <> 0
  )
  SELECT upd.id FROM upd;
END $$;
--> statement-breakpoint
ALTER FUNCTION webhook_claim(integer, integer, integer, text[], text[], text[]) SET jit = off;
--> statement-breakpoint
ALTER FUNCTION webhook_record_and_claim(json, integer, integer, integer, text[], text[]) SET jit = off;
