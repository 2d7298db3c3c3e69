-- An event's batch row (0031) is written by the database on every insert into `events`, no
-- longer by `emit`'s statement. With 0031 alone, an event written by anything else than the
-- new `emit` (a process of the previous version still running during a rolling upgrade, whose
-- statement has no batch row; a hand-written INSERT) would never be fanned out: nothing lists
-- it. One statement-level trigger per INSERT covers every writer: the statement's events,
-- grouped by transaction and organization, each batch inserted once (ON CONFLICT DO NOTHING:
-- the transaction's earlier statements may have made it). It runs as the inserting role, so
-- tenant isolation applies to the batch row as to the event.
CREATE FUNCTION events_add_batches() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
  INSERT INTO event_batches (tx, organization_id)
  SELECT DISTINCT n.tx, n.organization_id FROM new_events n
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER events_add_batches AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION events_add_batches();
