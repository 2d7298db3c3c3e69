-- QuickBooks Online sync, one way (operations.md §11). Row-level security, grants and FORCE are
-- added by the migrator's isolation pass like every tenant table (src/db/migrate.ts).
--
-- quickbooks_connections: an organization's one connection (realm, sealed tokens, where the
-- feed stopped reading the event outbox). A token refresh takes this row FOR UPDATE, so two
-- processes never both refresh (Intuit rotates the refresh token).
CREATE TABLE "quickbooks_connections" (
  "id" text NOT NULL,
  "organization_id" text NOT NULL,
  "status" text DEFAULT 'connected' NOT NULL,
  "realm_id" text NOT NULL,
  "access_token_sealed" text NOT NULL,
  "refresh_token_sealed" text NOT NULL,
  "access_expires_at" timestamp with time zone NOT NULL,
  "refresh_expires_at" timestamp with time zone,
  "token_generation" integer DEFAULT 0 NOT NULL,
  "connected_by" text,
  "connected_at" timestamp with time zone DEFAULT now() NOT NULL,
  "last_sync_at" timestamp with time zone,
  "last_error" text,
  "feed_tx" bigint DEFAULT 0 NOT NULL,
  "feed_event_id" text DEFAULT '' NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "quickbooks_connections_pkey" PRIMARY KEY ("organization_id", "id"),
  CONSTRAINT "quickbooks_connections_org_unique" UNIQUE ("organization_id"),
  CONSTRAINT "quickbooks_connections_status_check" CHECK ("status" IN ('connected', 'error'))
);
--> statement-breakpoint
ALTER TABLE "quickbooks_connections" ADD CONSTRAINT "quickbooks_connections_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- The sync outbox: one job per change of a record (version = the event that carried it), made
-- once whatever the number of feeders (the unique key). Claimed with FOR UPDATE SKIP LOCKED and a
-- lease; `error` keeps QuickBooks' own Fault text of a failed job. `create_round` counts the
-- retries asked for after QuickBooks refused to create the record: it is part of the create's
-- requestid, since Intuit answers a repeated requestid with its first answer, the refusal too.
CREATE TABLE "quickbooks_sync_jobs" (
  "id" text NOT NULL,
  "organization_id" text NOT NULL,
  "entity" text NOT NULL,
  "entity_id" text NOT NULL,
  "version" text NOT NULL,
  "event_type" text NOT NULL,
  "payload" json NOT NULL,
  "status" text DEFAULT 'pending' NOT NULL,
  "attempts" integer DEFAULT 0 NOT NULL,
  "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
  "locked_until" timestamp with time zone,
  "error" text,
  "error_code" text,
  "quickbooks_id" text,
  "create_round" integer DEFAULT 0 NOT NULL,
  "synced_at" timestamp with time zone,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "quickbooks_sync_jobs_pkey" PRIMARY KEY ("organization_id", "id"),
  CONSTRAINT "quickbooks_sync_jobs_version_unique" UNIQUE ("organization_id", "entity", "entity_id", "version"),
  CONSTRAINT "quickbooks_sync_jobs_status_check" CHECK ("status" IN ('pending', 'done', 'failed')),
  CONSTRAINT "quickbooks_sync_jobs_entity_check" CHECK ("entity" IN ('customer', 'invoice', 'payment'))
);
--> statement-breakpoint
ALTER TABLE "quickbooks_sync_jobs" ADD CONSTRAINT "quickbooks_sync_jobs_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "quickbooks_sync_jobs_due_idx" ON "quickbooks_sync_jobs" ("status", "next_attempt_at");
--> statement-breakpoint
CREATE INDEX "quickbooks_sync_jobs_record_idx" ON "quickbooks_sync_jobs" ("organization_id", "entity", "entity_id", "created_at");
--> statement-breakpoint
-- What each of our records is in QuickBooks (per realm: reconnecting the same company updates
-- instead of creating), with the SyncToken read back from its last write.
CREATE TABLE "quickbooks_records" (
  "id" text NOT NULL,
  "organization_id" text NOT NULL,
  "realm_id" text NOT NULL,
  "entity" text NOT NULL,
  "entity_id" text NOT NULL,
  "quickbooks_id" text NOT NULL,
  "sync_token" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "quickbooks_records_pkey" PRIMARY KEY ("organization_id", "id"),
  CONSTRAINT "quickbooks_records_entity_unique" UNIQUE ("organization_id", "realm_id", "entity", "entity_id")
);
--> statement-breakpoint
ALTER TABLE "quickbooks_records" ADD CONSTRAINT "quickbooks_records_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
