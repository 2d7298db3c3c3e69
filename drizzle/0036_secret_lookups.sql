-- Lookups by a secret that arrives without an organization (operations.md §13): an API key, a
-- device token, a portal token (and later a booking slug) first find their organization here, by
-- the SHA-256 of the secret, and only then read the tenant table, filtered by that organization.
-- Once tenant tables are distributed by organization_id (docs/scaling.md), the second read goes to
-- one shard; this table is global (a Citus reference table, copied to every node), so the first
-- read never fans out over the shards either.
--
-- `kind` says which table the secret belongs to; a new kind (booking slugs: the SHA-256 of the
-- slug) is a new value of the CHECK below, nothing else.
--
-- The organization column is `tenant_id`, not `organization_id`, on purpose: a table with an
-- `organization_id` is a tenant table by rule (src/db/migrate.ts gives it the tenant policy, and
-- a tenant table is keyed and distributed by organization), and this one is global: it is read
-- before any organization is known, by the platform role only (src/db/migrate.ts lists it among
-- the platform-only tables). A tenant transaction, which writes the mapping in the same
-- transaction as the secret, goes through the two functions below: they map and unmap secrets of
-- the transaction's own organization (`app.organization_id`) and nothing else, and it can read
-- no mapping at all.
-- No foreign key: a global table never points at a tenant table (organizations included), so a
-- mapping whose organization or row is gone resolves to nothing (401 / 404), not an error.
CREATE TABLE "secret_lookups" (
  "kind" text NOT NULL,
  "hash" text NOT NULL,
  "tenant_id" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "secret_lookups_pkey" PRIMARY KEY ("kind", "hash"),
  CONSTRAINT "secret_lookups_kind_check" CHECK ("kind" IN ('api_key', 'device_token', 'portal_token'))
);
--> statement-breakpoint
CREATE FUNCTION secret_lookup_record(p_kind text, p_hash text) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  INSERT INTO secret_lookups (kind, hash, tenant_id) VALUES (p_kind, p_hash, current_setting('app.organization_id'));
$$;
--> statement-breakpoint
CREATE FUNCTION secret_lookup_forget(p_kind text, p_hash text) RETURNS void
LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
  DELETE FROM secret_lookups
  WHERE kind = p_kind AND hash = p_hash AND tenant_id = current_setting('app.organization_id');
$$;
--> statement-breakpoint
REVOKE ALL ON FUNCTION secret_lookup_record(text, text), secret_lookup_forget(text, text) FROM PUBLIC;
--> statement-breakpoint
GRANT EXECUTE ON FUNCTION secret_lookup_record(text, text), secret_lookup_forget(text, text) TO crm_app;
--> statement-breakpoint
-- Backfill from the live secrets (revoked keys and tokens are never looked up again).
INSERT INTO "secret_lookups" ("kind", "hash", "tenant_id")
  SELECT 'api_key', "key_hash", "organization_id" FROM "api_keys" WHERE "revoked_at" IS NULL;
--> statement-breakpoint
INSERT INTO "secret_lookups" ("kind", "hash", "tenant_id")
  SELECT 'device_token', "token_hash", "organization_id" FROM "device_tokens" WHERE "revoked_at" IS NULL;
--> statement-breakpoint
-- Expired portal links stay: the customer page still says "this link expired, ask for a new one".
INSERT INTO "secret_lookups" ("kind", "hash", "tenant_id")
  SELECT 'portal_token', "token_hash", "organization_id" FROM "portal_tokens";
