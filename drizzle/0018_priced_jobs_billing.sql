ALTER TABLE "jobs" ADD COLUMN "line_items" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "total_cents" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "invoice_id" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "jobs_org_unbilled_completed_idx" ON "jobs" USING btree ("organization_id","completed_at") WHERE status = 'completed' AND invoice_id IS NULL;--> statement-breakpoint
CREATE INDEX "jobs_invoice_idx" ON "jobs" USING btree ("invoice_id") WHERE invoice_id IS NOT NULL;--> statement-breakpoint
ALTER TABLE "estimates" ADD COLUMN "job_id" text;--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE TABLE "invoice_billing_keys" (
	"organization_id" text NOT NULL,
	"key" text NOT NULL,
	"invoice_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "invoice_billing_keys_pk" PRIMARY KEY("organization_id","key")
);
--> statement-breakpoint
ALTER TABLE "invoice_billing_keys" ADD CONSTRAINT "invoice_billing_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "invoice_billing_keys" ADD CONSTRAINT "invoice_billing_keys_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE set null ON UPDATE no action;
