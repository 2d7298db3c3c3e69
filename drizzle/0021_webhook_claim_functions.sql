-- Webhook claims and results as functions (src/delivery/queue.ts): one round trip each,
-- no BEGIN / SET ROLE / COMMIT around them, and plans PL/pgSQL keeps per connection
-- instead of planning a large CTE on every call. They run as the caller (the platform role).
--
-- The claim keeps its two steps: the first statement locks the chosen endpoint rows
-- (FOR NO KEY UPDATE SKIP LOCKED); the second starts with a fresh snapshot (a VOLATILE
-- PL/pgSQL function takes one per statement), so it sees every claim committed before the
-- locks were held and counts each endpoint's deliveries in flight over all workers exactly.
-- Due endpoints are found by one probe each in webhook_deliveries_endpoint_due_idx (LATERAL
-- … LIMIT 1: a semi-join would read the whole backlog of every endpoint instead).
-- p_answered: the calling worker's claims whose receiver has already answered but whose
-- result is not written yet. They are no longer at the receiver, so they do not count
-- against the cap: the worker keeps sending while its writes are on their way.
CREATE OR REPLACE FUNCTION webhook_claim(p_limit integer, p_per_endpoint integer, p_lease_ms integer, p_token text,
                                         p_answered text[])
RETURNS TABLE (id text, organization_id text, endpoint_id text, event text, body text, attempt_count integer,
               url text, secret_enc text, previous_secret_enc text, previous_valid boolean)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp AS $$
#variable_conflict use_column
DECLARE
  locked text[];
BEGIN
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
    SELECT p.id, r.organization_id, p.rn
    FROM room r CROSS JOIN LATERAL (
      SELECT d.id, row_number() OVER (ORDER BY d.next_attempt_at, d.id) AS rn
      FROM webhook_deliveries d
      WHERE d.endpoint_id = r.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
        AND (d.locked_until IS NULL OR d.locked_until < now())
      ORDER BY d.next_attempt_at, d.id
      LIMIT r.n
    ) p
  ), chosen AS (
    SELECT s.id FROM (
      SELECT picks.id, row_number() OVER (PARTITION BY picks.organization_id ORDER BY picks.rn, random()) AS seq
      FROM picks
    ) s
    ORDER BY s.seq, random()
    LIMIT p_limit
  ), due AS (
    SELECT d.id FROM webhook_deliveries d
    WHERE d.id IN (SELECT chosen.id FROM chosen) AND d.status IN ('pending', 'failed')
      AND d.next_attempt_at <= now() AND (d.locked_until IS NULL OR d.locked_until < now())
    FOR UPDATE SKIP LOCKED
  ), claimed AS (
    UPDATE webhook_deliveries d
    SET locked_until = now() + make_interval(secs => p_lease_ms::double precision / 1000), claim_token = p_token
    FROM due, webhook_endpoints e
    WHERE d.id = due.id AND e.id = d.endpoint_id
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
-- Successful attempts in bulk (the common case): attempt log rows, deliveries → succeeded
-- where the claim is still held, failure counters of the touched endpoints reset where not
-- already zero. Returns the ids whose claim was still held.
CREATE OR REPLACE FUNCTION webhook_record_successes(
  p_ids text[], p_tokens text[], p_orgs text[], p_attempt_ids text[], p_attempted_at timestamptz[],
  p_status_codes integer[], p_durations integer[], p_bodies text[])
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
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
--> statement-breakpoint
-- A worker's writer records a batch of successes and, in the same call, claims deliveries
-- for the slots they freed: one round trip per turn of the loop instead of two in a row
-- (the claim's own statements see the results just written, as they run after them).
-- Rows: ('recorded', id, NULLs…) for each result whose claim was still held, then
-- ('claimed', …) for each new claim.
CREATE OR REPLACE FUNCTION webhook_record_and_claim(
  p_ids text[], p_tokens text[], p_orgs text[], p_attempt_ids text[], p_attempted_at timestamptz[],
  p_status_codes integer[], p_durations integer[], p_bodies text[],
  p_limit integer, p_per_endpoint integer, p_lease_ms integer, p_token text, p_answered text[])
RETURNS TABLE (kind text, id text, organization_id text, endpoint_id text, event text, body text,
               attempt_count integer, url text, secret_enc text, previous_secret_enc text, previous_valid boolean)
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  RETURN QUERY
  SELECT 'recorded'::text, r, NULL::text, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::text, NULL::text,
         NULL::text, NULL::boolean
  FROM webhook_record_successes(p_ids, p_tokens, p_orgs, p_attempt_ids, p_attempted_at, p_status_codes,
                                p_durations, p_bodies) AS r;
  IF p_limit > 0 THEN
    RETURN QUERY SELECT 'claimed'::text, c.* FROM webhook_claim(p_limit, p_per_endpoint, p_lease_ms, p_token, p_answered) AS c;
  END IF;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION webhook_claim(integer, integer, integer, text, text[]),
  webhook_record_successes(text[], text[], text[], text[], timestamptz[], integer[], integer[], text[]),
  webhook_record_and_claim(text[], text[], text[], text[], timestamptz[], integer[], integer[], text[],
                           integer, integer, integer, text, text[]) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION webhook_claim(integer, integer, integer, text, text[]),
  webhook_record_successes(text[], text[], text[], text[], timestamptz[], integer[], integer[], text[]),
  webhook_record_and_claim(text[], text[], text[], text[], timestamptz[], integer[], integer[], text[],
                           integer, integer, integer, text, text[]) TO crm_platform;
--> statement-breakpoint
-- Claims walk the endpoints (webhook_deliveries_endpoint_due_idx) since fair claiming; the
-- global due index is read by nothing and only cost a write per new delivery.
DROP INDEX IF EXISTS "webhook_deliveries_due_idx";
--> statement-breakpoint
-- Revocation in the revoking transaction itself (src/platform/auth/revocations.ts): every
-- change that can take a credential's access away bumps auth_generation and announces it
-- (pg_notify is delivered at commit) in the same transaction as the change, whoever makes
-- it: an API route, Better Auth's sign-out, `npm run admin`, a cascade. No process can commit
-- a revocation and die before announcing it. SECURITY DEFINER: the application role may not
-- touch auth_generation itself.
CREATE OR REPLACE FUNCTION auth_generation_bump() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
  g bigint;
BEGIN
  UPDATE auth_generation SET generation = generation + 1 WHERE id = 1 RETURNING generation INTO g;
  PERFORM pg_notify('crm_auth', g::text);
  RETURN NULL;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION auth_generation_bump() FROM PUBLIC;
--> statement-breakpoint
CREATE TRIGGER api_keys_revoked AFTER UPDATE OF revoked_at, role ON api_keys FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at OR OLD.role IS DISTINCT FROM NEW.role)
  EXECUTE FUNCTION auth_generation_bump();
--> statement-breakpoint
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION auth_generation_bump();
--> statement-breakpoint
CREATE TRIGGER device_tokens_revoked AFTER UPDATE OF revoked_at ON device_tokens FOR EACH ROW
  WHEN (OLD.revoked_at IS DISTINCT FROM NEW.revoked_at) EXECUTE FUNCTION auth_generation_bump();
--> statement-breakpoint
CREATE TRIGGER device_tokens_deleted AFTER DELETE ON device_tokens FOR EACH ROW EXECUTE FUNCTION auth_generation_bump();
--> statement-breakpoint
CREATE TRIGGER members_changed AFTER INSERT OR DELETE ON members FOR EACH ROW EXECUTE FUNCTION auth_generation_bump();
--> statement-breakpoint
CREATE TRIGGER members_role_changed AFTER UPDATE OF role ON members FOR EACH ROW
  WHEN (OLD.role IS DISTINCT FROM NEW.role) EXECUTE FUNCTION auth_generation_bump();
--> statement-breakpoint
CREATE TRIGGER organizations_plan_changed AFTER UPDATE OF plan ON organizations FOR EACH ROW
  WHEN (OLD.plan IS DISTINCT FROM NEW.plan) EXECUTE FUNCTION auth_generation_bump();
--> statement-breakpoint
CREATE TRIGGER sessions_ended AFTER DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION auth_generation_bump();
--> statement-breakpoint
CREATE TRIGGER sessions_organization_switched AFTER UPDATE OF active_organization_id ON sessions FOR EACH ROW
  WHEN (OLD.active_organization_id IS DISTINCT FROM NEW.active_organization_id)
  EXECUTE FUNCTION auth_generation_bump();
