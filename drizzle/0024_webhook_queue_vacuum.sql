-- webhook_deliveries is the worker's queue: every delivery is rewritten twice (claimed, then
-- its result), and each rewrite leaves dead index entries at the front of its endpoint's range
-- of webhook_deliveries_endpoint_due_idx, which every claim then walks until VACUUM removes
-- them. Measured on the webhook bench (2 vCPUs): PostgreSQL's CPU per delivery rose from about
-- 0.10 ms on a fresh table to 0.16–0.24 ms once 20,000–40,000 rows were dead, and a VACUUM
-- before each round cut the later rounds' figure by about a fifth. The default (vacuum once
-- 20 % of the table is dead) would let a table of millions of deliveries collect hundreds of
-- thousands first; here a vacuum is due after 2 % (at least 1,000 rows) and runs without the
-- cost-based pauses. PGlite keeps the settings and has no autovacuum.
ALTER TABLE "webhook_deliveries" SET (
  autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 1000,
  autovacuum_vacuum_cost_delay = 0
);
