CREATE TABLE "data_exports" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"status" text NOT NULL,
	"format" text NOT NULL,
	"resources" jsonb NOT NULL,
	"rows" bigint DEFAULT 0 NOT NULL,
	"total_rows" bigint,
	"size_bytes" bigint,
	"file_name" text,
	"error" text,
	"attempts" integer DEFAULT 0 NOT NULL,
	"requested_by" text NOT NULL,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "invoices_org_date_idx";--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "completed_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "data_exports" ADD CONSTRAINT "data_exports_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "data_exports_org_created_idx" ON "data_exports" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "data_exports_status_idx" ON "data_exports" USING btree ("status","created_at");--> statement-breakpoint
CREATE INDEX "data_exports_expires_idx" ON "data_exports" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "estimates_org_sent_idx" ON "estimates" USING btree ("organization_id","sent_at") WHERE sent_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX "invoices_org_status_due_idx" ON "invoices" USING btree ("organization_id","status","due_date","total_cents","amount_paid_cents");--> statement-breakpoint
CREATE INDEX "payment_refunds_org_created_idx" ON "payment_refunds" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "payments_org_date_idx" ON "payments" USING btree ("organization_id","payment_date","amount_cents");--> statement-breakpoint
CREATE INDEX "jobs_org_completed_idx" ON "jobs" USING btree ("organization_id","completed_at") WHERE "jobs"."completed_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "bills_org_status_due_idx" ON "bills" USING btree ("organization_id","status","due_date","total_cents","amount_paid_cents");--> statement-breakpoint
CREATE INDEX "invoices_org_date_idx" ON "invoices" USING btree ("organization_id","invoice_date","status","total_cents");--> statement-breakpoint
-- Jobs completed before completed_at existed: their last change is the completion (a completed job accepts only notes afterwards), the best date there is.
UPDATE "jobs" SET "completed_at" = "updated_at" WHERE "status" = 'completed' AND "completed_at" IS NULL;
