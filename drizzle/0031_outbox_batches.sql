-- The outbox no longer rewrites each event when it is fanned out. Marking every event
-- (`dispatched_at`, read through a partial index on it) made the fan-out's UPDATE a non-HOT
-- rewrite of the row with a new entry in each of the table's indexes: about half of the
-- fan-out's time, and measured on the webhook bench (2 vCPUs, PostgreSQL 15) about 15–20 µs
-- of the database's 70–80 µs per delivery.
--
-- What remains to fan out is now kept per writing transaction: `emit` adds one row to
-- `event_batches` per transaction and organization (its first event inserts it, the others
-- find it), and every event carries its transaction's id (`tx`). The batch row commits with
-- the events or rolls back with them, so a committed batch row means all its events are
-- visible. The fan-out takes batches oldest transaction first (FOR UPDATE SKIP LOCKED, so
-- two workers never fan out one batch), reads their events in id order through
-- `events_batch_idx`, and deletes a batch once all its events are made into deliveries
-- (or notes how far it got, `fanned_to`, when it stopped inside a big one). Per event it
-- reads; per transaction it writes one row.
--
-- Events not fanned out yet when this migration runs join one batch of the migrating
-- transaction; the others get tx 0 (no batch).
CREATE TABLE "event_batches" (
  "tx" bigint DEFAULT (pg_current_xact_id()::text::bigint) NOT NULL,
  "organization_id" text NOT NULL,
  "fanned_to" text,
  CONSTRAINT "event_batches_pkey" PRIMARY KEY ("tx", "organization_id")
);
--> statement-breakpoint
ALTER TABLE "event_batches" ADD CONSTRAINT "event_batches_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- A queue: rows are deleted as fast as they come. Vacuum it early (as the deliveries, 0024).
ALTER TABLE "event_batches" SET (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "tx" bigint DEFAULT 0 NOT NULL;
--> statement-breakpoint
WITH batch AS (
  INSERT INTO "event_batches" ("organization_id")
  SELECT DISTINCT "organization_id" FROM "events" WHERE "dispatched_at" IS NULL
  RETURNING "tx", "organization_id"
)
UPDATE "events" e SET "tx" = batch."tx"
FROM batch
WHERE e."organization_id" = batch."organization_id" AND e."dispatched_at" IS NULL;
--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "tx" SET DEFAULT (pg_current_xact_id()::text::bigint);
--> statement-breakpoint
DROP INDEX "events_undispatched_idx";
--> statement-breakpoint
ALTER TABLE "events" DROP COLUMN "dispatched_at";
--> statement-breakpoint
CREATE INDEX "events_batch_idx" ON "events" USING btree ("tx", "organization_id", "id");
