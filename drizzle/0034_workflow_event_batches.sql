-- The workflow engine no longer rewrites each event it has matched. Marking every event
-- (`workflows_checked_at`, read through the partial index `events_workflows_unchecked_idx`) was a
-- non-HOT rewrite of the row with a new entry in each of the table's indexes: the same cost the
-- webhook fan-out shed in 0031, paid once more per event by the workflows worker.
--
-- What the engine has still to match is now kept per writing transaction, as for the fan-out
-- (0031), in a table of its own so that each reader goes at its own pace: the trigger of 0033 adds
-- a row to `workflow_event_batches` beside the one in `event_batches` (same statement, same
-- transaction, so a committed row means its events are visible). The engine locks the oldest
-- batches (FOR UPDATE SKIP LOCKED), reads their events in id order through `events_batch_idx`,
-- records its runs, and deletes a batch once it has read all of it (or notes how far it got,
-- `checked_to`, when it stopped inside a big one), in one transaction. The events are only read.
--
-- Events not matched yet when this migration runs get batch rows. Those of tx 0 (written before
-- 0031, so fanned out long ago) first move to the migrating transaction's tx, so that the batch
-- reads only them and not the organization's whole history. `workflows_checked_at` stays, set on
-- the events matched before this migration: the engine skips those, so an event a batch shares
-- with them (a transaction the old engine had matched in part) is matched once. New events leave it
-- null.
CREATE TABLE "workflow_event_batches" (
  "tx" bigint NOT NULL,
  "organization_id" text NOT NULL,
  "checked_to" text,
  CONSTRAINT "workflow_event_batches_pkey" PRIMARY KEY ("tx", "organization_id")
);
--> statement-breakpoint
ALTER TABLE "workflow_event_batches" ADD CONSTRAINT "workflow_event_batches_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- A queue: rows are deleted as fast as they come. Vacuum it early (as event_batches, 0031).
ALTER TABLE "workflow_event_batches" SET (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
--> statement-breakpoint
UPDATE "events" SET "tx" = pg_current_xact_id()::text::bigint
WHERE "tx" = 0 AND "workflows_checked_at" IS NULL;
--> statement-breakpoint
INSERT INTO "workflow_event_batches" ("tx", "organization_id")
SELECT DISTINCT "tx", "organization_id" FROM "events" WHERE "workflows_checked_at" IS NULL;
--> statement-breakpoint
DROP INDEX "events_workflows_unchecked_idx";
--> statement-breakpoint
-- Every statement that inserts events adds its batches for both readers, in one statement.
CREATE OR REPLACE FUNCTION events_add_batches() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  WITH batch AS (
    SELECT DISTINCT n.tx, n.organization_id FROM new_events n
  ), fan_out AS (
    INSERT INTO event_batches (tx, organization_id)
    SELECT batch.tx, batch.organization_id FROM batch
    ON CONFLICT DO NOTHING
  )
  INSERT INTO workflow_event_batches (tx, organization_id)
  SELECT batch.tx, batch.organization_id FROM batch
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
