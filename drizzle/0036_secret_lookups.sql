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
-- Its column is named `organization_id` on purpose: src/db/migrate.ts then gives it the tenant
-- policy like every tenant table (FORCE RLS), so a tenant transaction (crm_app), which writes the
-- row in the same transaction as the key it maps, can only add or remove mappings to its own
-- organization and read none of another's; the resolver reads it as crm_platform (BYPASSRLS).
-- It has no foreign key: a global table never points at a tenant table (organizations included),
-- so a mapping whose organization or key is gone resolves to nothing (401 / 404), not an error.
CREATE TABLE "secret_lookups" (
  "kind" text NOT NULL,
  "hash" text NOT NULL,
  "organization_id" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "secret_lookups_pkey" PRIMARY KEY ("kind", "hash"),
  CONSTRAINT "secret_lookups_kind_check" CHECK ("kind" IN ('api_key', 'device_token', 'portal_token'))
);
--> statement-breakpoint
-- Backfill from the live secrets (revoked keys and tokens are never looked up again).
INSERT INTO "secret_lookups" ("kind", "hash", "organization_id")
  SELECT 'api_key', "key_hash", "organization_id" FROM "api_keys" WHERE "revoked_at" IS NULL;
--> statement-breakpoint
INSERT INTO "secret_lookups" ("kind", "hash", "organization_id")
  SELECT 'device_token', "token_hash", "organization_id" FROM "device_tokens" WHERE "revoked_at" IS NULL;
--> statement-breakpoint
-- Expired portal links stay: the customer page still says "this link expired, ask for a new one".
INSERT INTO "secret_lookups" ("kind", "hash", "organization_id")
  SELECT 'portal_token', "token_hash", "organization_id" FROM "portal_tokens";
