CREATE TABLE "workflow_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"workflow_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"definition" jsonb NOT NULL,
	"depth" integer DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"actions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"locked_until" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "workflows" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"trigger_event" text NOT NULL,
	"conditions" jsonb NOT NULL,
	"actions" jsonb NOT NULL,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "depth" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Events that predate workflows count as checked (no workflow existed to match them); the constant
-- default is stored once in the catalog, so this rewrites no row. New events start unchecked.
ALTER TABLE "events" ADD COLUMN "workflows_checked_at" timestamp with time zone DEFAULT now();--> statement-breakpoint
ALTER TABLE "events" ALTER COLUMN "workflows_checked_at" DROP DEFAULT;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_workflow_id_workflows_id_fk" FOREIGN KEY ("workflow_id") REFERENCES "public"."workflows"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workflows" ADD CONSTRAINT "workflows_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_runs_workflow_event_key" ON "workflow_runs" USING btree ("workflow_id","event_id");--> statement-breakpoint
CREATE INDEX "workflow_runs_org_workflow_idx" ON "workflow_runs" USING btree ("organization_id","workflow_id","created_at","id");--> statement-breakpoint
CREATE INDEX "workflow_runs_pending_idx" ON "workflow_runs" USING btree ("created_at") WHERE status = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "workflows_org_name_key" ON "workflows" USING btree ("organization_id","name");--> statement-breakpoint
CREATE INDEX "workflows_org_created_idx" ON "workflows" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "workflows_org_trigger_idx" ON "workflows" USING btree ("organization_id","trigger_event") WHERE active;--> statement-breakpoint
CREATE INDEX "events_workflows_unchecked_idx" ON "events" USING btree ("created_at") WHERE workflows_checked_at IS NULL;