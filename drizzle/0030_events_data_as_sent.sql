-- The outbox keeps an event's data as the JSON text it was written with (`json`), no longer
-- parsed into `jsonb`. The data is written once, never queried inside the database, and read
-- back only to be sent: the webhook fan-out now builds each delivery's body in SQL, in the same
-- statement that claims the events (src/delivery/fanout.ts), and with `json` it embeds the bytes
-- the event was emitted with. With `jsonb` it would have had to print them again (`jsonb::text`
-- puts a space after every `:` and `,`, and orders keys by length), or send every event's data
-- through the worker to parse and re-print it, which was about a third of the worker's CPU per
-- delivery beside the sends (webhook bench). Rows written before keep their content; only their
-- spacing changes, in the bodies of events not yet fanned out.
-- This rewrites the events table once (a type change takes its lock for as long as that lasts).
ALTER TABLE "events" ALTER COLUMN "data" SET DATA TYPE json USING "data"::json;
--> statement-breakpoint
-- The outbox is a queue as well: each event is rewritten when it is fanned out (and again when
-- the workflows have seen it), and the fan-out reads `events_undispatched_idx` from its oldest
-- entry, so until VACUUM it walks past the entries of every event fanned out since the last one.
-- The same settings as the deliveries' (0024): a vacuum after 2 % of the table (at least 1,000
-- rows) is dead, without the cost-based pauses.
ALTER TABLE "events" SET (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
