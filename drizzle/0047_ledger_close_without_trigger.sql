-- The period-close backstop trigger goes (issue 50, docs/scaling.md): on Citus a trigger on a
-- distributed table runs on the node holding the shard, where ledger_close_lock's read of
-- ledger_closes is a distributed query from a query on a shard, which Citus refuses (and
-- citus.enable_unsafe_triggers only lets such triggers be created, not nest queries). The rule is
-- now "no triggers on any table" (test/platform/distribution-keys.test.ts). What the trigger
-- guarded stays guarded by the service: every posting goes through postEntry, which takes the
-- organization's ledger_closes row FOR SHARE through ledger_close_lock() and refuses a date in the
-- closed period (409 PERIOD_CLOSED) before it inserts, while a close or reopen takes that row FOR
-- UPDATE: a close racing a posting is still serialized (test/purchasing/ledger-close.test.ts).
DROP TRIGGER IF EXISTS "ledger_entries_open_period" ON "ledger_entries";
--> statement-breakpoint
DROP FUNCTION IF EXISTS ledger_entries_open_period();
