CREATE TABLE "payment_refunds" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"payment_id" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"applied_cents" bigint NOT NULL,
	"reason" text,
	"origin" text NOT NULL,
	"processor_refund_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "reference" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "status" text DEFAULT 'succeeded' NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "refunded_cents" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "unapplied_cents" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "origin" text DEFAULT 'API' NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "processor_payment_id" text;--> statement-breakpoint
ALTER TABLE "payment_refunds" ADD CONSTRAINT "payment_refunds_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_refunds" ADD CONSTRAINT "payment_refunds_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "payment_refunds_org_payment_idx" ON "payment_refunds" USING btree ("organization_id","payment_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_refunds_org_processor_uq" ON "payment_refunds" USING btree ("organization_id","processor_refund_id");--> statement-breakpoint
CREATE INDEX "payments_org_created_idx" ON "payments" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "payments_org_unapplied_idx" ON "payments" USING btree ("organization_id","created_at","id") WHERE unapplied_cents > 0;--> statement-breakpoint
CREATE UNIQUE INDEX "payments_org_processor_uq" ON "payments" USING btree ("organization_id","processor_payment_id");