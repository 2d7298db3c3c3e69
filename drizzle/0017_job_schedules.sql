CREATE TABLE "job_schedules" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"property_id" text,
	"contract_id" text,
	"title" text NOT NULL,
	"rrule" text NOT NULL,
	"start_date" date NOT NULL,
	"end_date" date,
	"start_time" text,
	"duration_minutes" integer,
	"assigned_to" text[] DEFAULT '{}'::text[] NOT NULL,
	"crew_id" text,
	"line_items" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"checklist" text[] DEFAULT '{}'::text[] NOT NULL,
	"notes" text,
	"billing" jsonb NOT NULL,
	"status" text NOT NULL,
	"generated_through" date,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_property_id_properties_id_fk" FOREIGN KEY ("property_id") REFERENCES "public"."properties"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_contract_id_contracts_id_fk" FOREIGN KEY ("contract_id") REFERENCES "public"."contracts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_crew_id_crews_id_fk" FOREIGN KEY ("crew_id") REFERENCES "public"."crews"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "job_schedules_org_created_idx" ON "job_schedules" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "job_schedules_org_customer_created_idx" ON "job_schedules" USING btree ("organization_id","customer_id","created_at","id");--> statement-breakpoint
CREATE INDEX "job_schedules_org_status_created_idx" ON "job_schedules" USING btree ("organization_id","status","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "job_schedules_contract_uq" ON "job_schedules" USING btree ("organization_id","contract_id") WHERE contract_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "job_schedules_due_idx" ON "job_schedules" USING btree ("generated_through") WHERE status = 'active';--> statement-breakpoint
CREATE TABLE "job_schedule_skips" (
	"organization_id" text NOT NULL,
	"schedule_id" text NOT NULL,
	"occurrence_date" date NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "job_schedule_skips_pk" PRIMARY KEY("schedule_id","occurrence_date")
);
--> statement-breakpoint
ALTER TABLE "job_schedule_skips" ADD CONSTRAINT "job_schedule_skips_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "job_schedule_skips" ADD CONSTRAINT "job_schedule_skips_schedule_id_job_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."job_schedules"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "start_time" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "starts_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "duration_minutes" integer;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "crew_id" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "schedule_id" text;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "occurrence_date" date;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "reminder_sent_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "route_order" integer;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "hand_edited_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_crew_id_crews_id_fk" FOREIGN KEY ("crew_id") REFERENCES "public"."crews"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_schedule_id_job_schedules_id_fk" FOREIGN KEY ("schedule_id") REFERENCES "public"."job_schedules"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_schedule_occurrence_uq" ON "jobs" USING btree ("schedule_id","occurrence_date");;--> statement-breakpoint
CREATE INDEX "jobs_reminder_due_idx" ON "jobs" USING btree ("scheduled_date") WHERE reminder_sent_at IS NULL AND status = 'scheduled';
