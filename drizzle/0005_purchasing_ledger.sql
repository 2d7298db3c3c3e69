CREATE TABLE "ledger_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"entry_date" date NOT NULL,
	"source_type" text NOT NULL,
	"source_id" text NOT NULL,
	"memo" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_lines" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"entry_id" text NOT NULL,
	"position" integer NOT NULL,
	"account_code" text NOT NULL,
	"debit_cents" bigint DEFAULT 0 NOT NULL,
	"credit_cents" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bill_lines" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"bill_id" text NOT NULL,
	"position" integer NOT NULL,
	"description" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"account_code" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bill_payment_allocations" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"bill_payment_id" text NOT NULL,
	"bill_id" text NOT NULL,
	"position" integer NOT NULL,
	"amount_cents" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bill_payments" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"vendor_id" text NOT NULL,
	"method" text NOT NULL,
	"payment_date" date NOT NULL,
	"reference" text,
	"status" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"failure_reason" text,
	"settled_at" timestamp with time zone,
	"failed_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "bills" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"bill_number" text NOT NULL,
	"vendor_id" text NOT NULL,
	"purchase_order_id" text,
	"vendor_reference" text,
	"status" text NOT NULL,
	"bill_date" date NOT NULL,
	"due_date" date NOT NULL,
	"notes" text,
	"total_cents" bigint NOT NULL,
	"amount_paid_cents" bigint DEFAULT 0 NOT NULL,
	"posted_at" timestamp with time zone,
	"approved_at" timestamp with time zone,
	"approved_by" text,
	"voided_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "purchase_order_lines" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"purchase_order_id" text NOT NULL,
	"position" integer NOT NULL,
	"description" text NOT NULL,
	"quantity" numeric(15, 3) NOT NULL,
	"unit_cost_cents" bigint NOT NULL,
	"amount_cents" bigint NOT NULL,
	"equipment_id" text
);
--> statement-breakpoint
CREATE TABLE "purchase_orders" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"po_number" text NOT NULL,
	"vendor_id" text NOT NULL,
	"job_id" text,
	"status" text NOT NULL,
	"order_date" date NOT NULL,
	"expected_date" date,
	"notes" text,
	"total_cents" bigint NOT NULL,
	"bill_id" text,
	"sent_at" timestamp with time zone,
	"received_at" timestamp with time zone,
	"cancelled_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vendors" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"name" text NOT NULL,
	"email" text,
	"phone" text,
	"address" text,
	"payment_terms_days" integer,
	"notes" text,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_lines" ADD CONSTRAINT "ledger_lines_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_lines" ADD CONSTRAINT "ledger_lines_entry_id_ledger_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."ledger_entries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_lines" ADD CONSTRAINT "bill_lines_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_lines" ADD CONSTRAINT "bill_lines_bill_id_bills_id_fk" FOREIGN KEY ("bill_id") REFERENCES "public"."bills"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_payment_allocations" ADD CONSTRAINT "bill_payment_allocations_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_payment_allocations" ADD CONSTRAINT "bill_payment_allocations_bill_payment_id_bill_payments_id_fk" FOREIGN KEY ("bill_payment_id") REFERENCES "public"."bill_payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_payment_allocations" ADD CONSTRAINT "bill_payment_allocations_bill_id_bills_id_fk" FOREIGN KEY ("bill_id") REFERENCES "public"."bills"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_payments" ADD CONSTRAINT "bill_payments_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bill_payments" ADD CONSTRAINT "bill_payments_vendor_id_vendors_id_fk" FOREIGN KEY ("vendor_id") REFERENCES "public"."vendors"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bills" ADD CONSTRAINT "bills_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bills" ADD CONSTRAINT "bills_vendor_id_vendors_id_fk" FOREIGN KEY ("vendor_id") REFERENCES "public"."vendors"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "bills" ADD CONSTRAINT "bills_purchase_order_id_purchase_orders_id_fk" FOREIGN KEY ("purchase_order_id") REFERENCES "public"."purchase_orders"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchase_order_lines" ADD CONSTRAINT "purchase_order_lines_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchase_order_lines" ADD CONSTRAINT "purchase_order_lines_purchase_order_id_purchase_orders_id_fk" FOREIGN KEY ("purchase_order_id") REFERENCES "public"."purchase_orders"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchase_orders" ADD CONSTRAINT "purchase_orders_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchase_orders" ADD CONSTRAINT "purchase_orders_vendor_id_vendors_id_fk" FOREIGN KEY ("vendor_id") REFERENCES "public"."vendors"("id") ON DELETE restrict ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchase_orders" ADD CONSTRAINT "purchase_orders_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vendors" ADD CONSTRAINT "vendors_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ledger_entries_org_created_idx" ON "ledger_entries" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "ledger_entries_org_source_idx" ON "ledger_entries" USING btree ("organization_id","source_type","source_id");--> statement-breakpoint
CREATE INDEX "ledger_entries_org_date_idx" ON "ledger_entries" USING btree ("organization_id","entry_date");--> statement-breakpoint
CREATE INDEX "ledger_lines_org_entry_idx" ON "ledger_lines" USING btree ("organization_id","entry_id","position");--> statement-breakpoint
CREATE INDEX "ledger_lines_org_account_idx" ON "ledger_lines" USING btree ("organization_id","account_code");--> statement-breakpoint
CREATE INDEX "bill_lines_org_bill_idx" ON "bill_lines" USING btree ("organization_id","bill_id","position");--> statement-breakpoint
CREATE INDEX "bill_payment_allocations_org_payment_idx" ON "bill_payment_allocations" USING btree ("organization_id","bill_payment_id","position");--> statement-breakpoint
CREATE INDEX "bill_payment_allocations_org_bill_idx" ON "bill_payment_allocations" USING btree ("organization_id","bill_id");--> statement-breakpoint
CREATE INDEX "bill_payments_org_created_idx" ON "bill_payments" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "bill_payments_org_vendor_idx" ON "bill_payments" USING btree ("organization_id","vendor_id","created_at","id");--> statement-breakpoint
CREATE INDEX "bill_payments_scheduled_idx" ON "bill_payments" USING btree ("payment_date") WHERE status = 'scheduled';--> statement-breakpoint
CREATE UNIQUE INDEX "bills_org_number_uq" ON "bills" USING btree ("organization_id","bill_number");--> statement-breakpoint
CREATE INDEX "bills_org_created_idx" ON "bills" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "bills_org_vendor_idx" ON "bills" USING btree ("organization_id","vendor_id","created_at","id");--> statement-breakpoint
CREATE INDEX "purchase_order_lines_org_po_idx" ON "purchase_order_lines" USING btree ("organization_id","purchase_order_id","position");--> statement-breakpoint
CREATE UNIQUE INDEX "purchase_orders_org_number_uq" ON "purchase_orders" USING btree ("organization_id","po_number");--> statement-breakpoint
CREATE INDEX "purchase_orders_org_created_idx" ON "purchase_orders" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "purchase_orders_org_vendor_idx" ON "purchase_orders" USING btree ("organization_id","vendor_id","created_at","id");--> statement-breakpoint
CREATE INDEX "vendors_org_created_idx" ON "vendors" USING btree ("organization_id","created_at","id");