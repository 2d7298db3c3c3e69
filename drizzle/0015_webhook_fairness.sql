-- Fair claiming walks the endpoints and takes the oldest few due deliveries of each
-- (src/delivery/queue.ts); this index makes "the oldest due of one endpoint" one probe.
CREATE INDEX "webhook_deliveries_endpoint_due_idx" ON "webhook_deliveries" USING btree ("endpoint_id","next_attempt_at","id") WHERE status IN ('pending', 'failed');--> statement-breakpoint
-- The deliveries in flight right now (claimed, result not yet written): the per-endpoint
-- concurrency cap counts them across every worker. Small: only claimed rows are in it.
CREATE INDEX "webhook_deliveries_endpoint_claimed_idx" ON "webhook_deliveries" USING btree ("endpoint_id","locked_until") WHERE claim_token IS NOT NULL;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "rate_limit_per_second" integer;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_rate_limit_positive" CHECK ("rate_limit_per_second" IS NULL OR "rate_limit_per_second" > 0);--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "rate_tokens" double precision;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "rate_refilled_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD COLUMN "paused_until" timestamp with time zone;
--> statement-breakpoint
-- One row: bumped by every revocation (API key, device token, member, plan, sign-out);
-- API processes serve a cached credential only while it is unchanged (src/platform/auth/revocations.ts).
CREATE TABLE "auth_generation" (
	"id" integer PRIMARY KEY DEFAULT 1 NOT NULL,
	"generation" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "auth_generation_one_row" CHECK ("id" = 1)
);
--> statement-breakpoint
INSERT INTO "auth_generation" ("id", "generation") VALUES (1, 0);