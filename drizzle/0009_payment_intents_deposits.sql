CREATE TABLE "deposit_payments" (
	"organization_id" text NOT NULL,
	"deposit_id" text NOT NULL,
	"payment_id" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "deposit_payments_deposit_id_payment_id_pk" PRIMARY KEY("deposit_id","payment_id")
);
--> statement-breakpoint
CREATE TABLE "deposits" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"deposit_date" date NOT NULL,
	"reference" text,
	"amount_cents" bigint NOT NULL,
	"origin" text NOT NULL,
	"processor_payout_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payment_intents" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"invoice_id" text NOT NULL,
	"amount_cents" bigint NOT NULL,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"processor_intent_id" text NOT NULL,
	"client_secret" text,
	"source" text NOT NULL,
	"last_error" text,
	"payment_id" text,
	"status_event_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "deposit_payments" ADD CONSTRAINT "deposit_payments_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deposit_payments" ADD CONSTRAINT "deposit_payments_deposit_id_deposits_id_fk" FOREIGN KEY ("deposit_id") REFERENCES "public"."deposits"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deposit_payments" ADD CONSTRAINT "deposit_payments_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deposits" ADD CONSTRAINT "deposits_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_intents" ADD CONSTRAINT "payment_intents_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_intents" ADD CONSTRAINT "payment_intents_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "payment_intents" ADD CONSTRAINT "payment_intents_payment_id_payments_id_fk" FOREIGN KEY ("payment_id") REFERENCES "public"."payments"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "deposit_payments_org_payment_uq" ON "deposit_payments" USING btree ("organization_id","payment_id");--> statement-breakpoint
CREATE INDEX "deposit_payments_org_deposit_idx" ON "deposit_payments" USING btree ("organization_id","deposit_id");--> statement-breakpoint
CREATE INDEX "deposits_org_created_idx" ON "deposits" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "deposits_org_date_idx" ON "deposits" USING btree ("organization_id","deposit_date");--> statement-breakpoint
CREATE UNIQUE INDEX "deposits_org_payout_uq" ON "deposits" USING btree ("organization_id","processor_payout_id");--> statement-breakpoint
CREATE INDEX "payment_intents_org_created_idx" ON "payment_intents" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "payment_intents_org_invoice_idx" ON "payment_intents" USING btree ("organization_id","invoice_id","created_at","id");--> statement-breakpoint
CREATE INDEX "payment_intents_org_status_idx" ON "payment_intents" USING btree ("organization_id","status","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "payment_intents_org_processor_uq" ON "payment_intents" USING btree ("organization_id","processor_intent_id");