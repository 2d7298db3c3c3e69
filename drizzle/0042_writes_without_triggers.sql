-- No trigger writes another table any more: on Citus a trigger runs on the node holding the
-- row's shard, where a statement on another distributed or reference table is refused ("cannot
-- execute a distributed query from a query on a shard"), and its pg_notify is sent by that node,
-- whose notifications the listeners connected to the coordinator never hear (docs/scaling.md).
--
-- The outbox's batch rows (0033, 0034) are written by `emit` itself, in the statement that
-- writes the events (src/platform/events/outbox.ts).
DROP TRIGGER IF EXISTS "events_add_batches" ON "events";
--> statement-breakpoint
DROP FUNCTION IF EXISTS events_add_batches();
--> statement-breakpoint
-- Revocations (0021): the service bumps the generation and announces it in the revoking
-- transaction (src/platform/auth/revocations.ts, `bumpAuthGeneration`), in each function that
-- revokes: an API key or device token revoked or re-roled, a member added, removed or re-roled,
-- a plan changed, a session switched to another organization; a session Better Auth deletes
-- (sign-out) right after, from its delete hook. SECURITY DEFINER: the tenant role may not touch
-- auth_generation itself, only move it on by one. Platform transactions (crm_platform, which may
-- write it) make the same update as themselves (`bumpAuthGenerationAsPlatform`): on Citus one
-- transaction may not write reference tables as two roles.
DROP TRIGGER IF EXISTS "api_keys_revoked" ON "api_keys";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "api_keys_deleted" ON "api_keys";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "device_tokens_revoked" ON "device_tokens";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "device_tokens_deleted" ON "device_tokens";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "members_changed" ON "members";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "members_role_changed" ON "members";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "organizations_plan_changed" ON "organizations";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "sessions_ended" ON "sessions";
--> statement-breakpoint
DROP TRIGGER IF EXISTS "sessions_organization_switched" ON "sessions";
--> statement-breakpoint
DROP FUNCTION IF EXISTS auth_generation_bump();
--> statement-breakpoint
CREATE FUNCTION auth_generation_bump() RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
  g bigint;
BEGIN
  UPDATE auth_generation SET generation = generation + 1 WHERE id = 1 RETURNING generation INTO g;
  PERFORM pg_notify('crm_auth', g::text);
  RETURN g;
END $$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION auth_generation_bump() FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION auth_generation_bump() TO crm_app, crm_platform;
