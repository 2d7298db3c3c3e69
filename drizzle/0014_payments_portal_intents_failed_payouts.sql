CREATE TABLE "failed_payouts" (
	"organization_id" text NOT NULL,
	"processor_payout_id" text NOT NULL,
	"failure_code" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "failed_payouts_organization_id_processor_payout_id_pk" PRIMARY KEY("organization_id","processor_payout_id")
);
--> statement-breakpoint
ALTER TABLE "payment_intents" ALTER COLUMN "processor_intent_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "failed_payouts" ADD CONSTRAINT "failed_payouts_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Hand-written (before the index it makes possible): an invoice that already holds several
-- open portal intents (possible before this index) keeps its newest; the older ones are
-- marked canceled here. A payment that still succeeds on one of them is recorded as ever
-- (a succeeded event moves a canceled intent to succeeded; money taken is never dropped).
UPDATE "payment_intents" p SET "status" = 'canceled', "updated_at" = now(),
  "last_error" = 'Superseded by a newer portal intent of the same invoice (one open portal intent per invoice)'
WHERE p."source" = 'PORTAL' AND p."status" IN ('requires_payment_method', 'processing')
  AND EXISTS (SELECT 1 FROM "payment_intents" n
    WHERE n."organization_id" = p."organization_id" AND n."invoice_id" = p."invoice_id"
      AND n."source" = 'PORTAL' AND n."status" IN ('requires_payment_method', 'processing')
      AND (n."created_at", n."id") > (p."created_at", p."id"));--> statement-breakpoint
CREATE UNIQUE INDEX "payment_intents_portal_open_uq" ON "payment_intents" USING btree ("organization_id","invoice_id") WHERE source = 'PORTAL' AND status IN ('requires_payment_method', 'processing');--> statement-breakpoint
CREATE INDEX "payment_intents_open_idx" ON "payment_intents" USING btree ("updated_at") WHERE status = 'requires_payment_method';