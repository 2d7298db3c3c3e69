-- A delivery's successful attempt is kept on the delivery row instead of as a row of
-- webhook_attempts, when it is recorded in bulk (webhook_record_successes, the worker's usual
-- path). The success already rewrites the delivery row (status, last_status_code,
-- last_attempt_at); the attempt row beside it was a second insert with two indexes and two
-- foreign-key checks: about a third of the database's time per delivery in the worker's
-- record-and-claim call (webhook bench). The attempt log reads the rows and, for a succeeded
-- delivery, this one (GET /api/webhooks/deliveries/{id}: `attemptLog`), so what a client sees
-- is unchanged: same id, time, status code, duration and response body.
--
-- A success is terminal (requeue takes only dead deliveries), so these columns are written
-- once. A result that arrives after its claim was lost (another worker's result came first)
-- is still an attempt that happened: it is logged as a row, as before; so is a success
-- written one by one (recordAttempt).
--
-- The results' JSON loses two costs of the worker's: `org` (the log row takes the delivery's)
-- and `attempted_at` as ISO text (now `attempted_ms`, milliseconds since the epoch: a number
-- JSON.stringify writes without calling Date#toISOString). The old key is still read, so a
-- worker of the previous version that calls the function meanwhile is still understood.
ALTER TABLE "webhook_deliveries" ADD COLUMN "success_attempt_id" text;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "success_duration_ms" integer;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD COLUMN "success_response_body" text;--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhook_record_successes(p_results json)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off
  SET enable_hashjoin = off SET enable_mergejoin = off AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  WITH input AS (
    SELECT x.id, x.due, x.attempt_id,
           COALESCE(to_timestamp(x.attempted_ms / 1000.0), x.attempted_at) AS attempted_at,
           x.status_code, x.duration_ms, x.response_body
    FROM json_to_recordset(p_results) AS x(id text, due timestamptz, attempt_id text, attempted_ms double precision,
      attempted_at timestamptz, status_code integer, duration_ms integer, response_body text)
  ), upd AS (
    UPDATE webhook_deliveries d
    SET status = 'succeeded', attempt_count = d.attempt_count + 1,
        last_status_code = i.status_code, last_error = NULL, last_attempt_at = i.attempted_at,
        success_attempt_id = i.attempt_id, success_duration_ms = i.duration_ms,
        success_response_body = i.response_body,
        succeeded_at = now(), updated_at = now()
    FROM input i
    WHERE d.id = i.id AND d.status NOT IN ('succeeded', 'dead') AND d.next_attempt_at = i.due
    RETURNING d.id, d.endpoint_id
  ), log AS (
    -- The results that did not apply (the claim was lost) are logged as rows.
    INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
    SELECT i.attempt_id, d.organization_id, i.id, i.attempted_at, i.status_code, i.duration_ms, NULL, i.response_body
    FROM input i JOIN webhook_deliveries d ON d.id = i.id
    WHERE i.id <> ALL(ARRAY(SELECT upd.id FROM upd))
  ), ep AS (
    UPDATE webhook_endpoints e SET consecutive_failures = 0, updated_at = now()
    WHERE e.id IN (SELECT upd.endpoint_id FROM upd) AND e.consecutive_failures <> 0
  )
  SELECT upd.id FROM upd;
END $$;
