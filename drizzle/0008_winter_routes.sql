CREATE TABLE "storms" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"name" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"ended_at" timestamp with time zone,
	"snowfall_inches" double precision NOT NULL,
	"ice" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "winter_route_stops" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"route_id" text NOT NULL,
	"property_id" text NOT NULL,
	"sequence" integer NOT NULL,
	"services" text[] NOT NULL,
	"trigger_inches" double precision DEFAULT 2 NOT NULL,
	"billing_mode" text NOT NULL,
	"price_cents" bigint NOT NULL,
	"notes" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "winter_routes" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"name" text NOT NULL,
	"crew_id" text,
	"depot_lat" double precision,
	"depot_lng" double precision,
	"active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "winter_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"storm_id" text NOT NULL,
	"route_id" text NOT NULL,
	"status" text DEFAULT 'dispatched' NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "winter_visits" (
	"id" text PRIMARY KEY NOT NULL,
	"organization_id" text NOT NULL,
	"run_id" text NOT NULL,
	"stop_id" text NOT NULL,
	"property_id" text NOT NULL,
	"customer_id" text NOT NULL,
	"sequence" integer NOT NULL,
	"services" text[] NOT NULL,
	"billing_mode" text NOT NULL,
	"price_cents" bigint NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"serviced_at" timestamp with time zone,
	"pushes" integer,
	"salt_lbs" double precision,
	"notes" text,
	"recorded_at" timestamp with time zone,
	"invoice_id" text,
	"billed_cents" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "storms" ADD CONSTRAINT "storms_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_route_stops" ADD CONSTRAINT "winter_route_stops_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_route_stops" ADD CONSTRAINT "winter_route_stops_route_id_winter_routes_id_fk" FOREIGN KEY ("route_id") REFERENCES "public"."winter_routes"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_route_stops" ADD CONSTRAINT "winter_route_stops_property_id_properties_id_fk" FOREIGN KEY ("property_id") REFERENCES "public"."properties"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_routes" ADD CONSTRAINT "winter_routes_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_routes" ADD CONSTRAINT "winter_routes_crew_id_crews_id_fk" FOREIGN KEY ("crew_id") REFERENCES "public"."crews"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_runs" ADD CONSTRAINT "winter_runs_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_runs" ADD CONSTRAINT "winter_runs_storm_id_storms_id_fk" FOREIGN KEY ("storm_id") REFERENCES "public"."storms"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_runs" ADD CONSTRAINT "winter_runs_route_id_winter_routes_id_fk" FOREIGN KEY ("route_id") REFERENCES "public"."winter_routes"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_run_id_winter_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."winter_runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_property_id_properties_id_fk" FOREIGN KEY ("property_id") REFERENCES "public"."properties"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_invoice_id_invoices_id_fk" FOREIGN KEY ("invoice_id") REFERENCES "public"."invoices"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "storms_org_created_idx" ON "storms" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "winter_route_stops_org_route_seq_idx" ON "winter_route_stops" USING btree ("organization_id","route_id","sequence","id");--> statement-breakpoint
CREATE UNIQUE INDEX "winter_route_stops_route_property_uq" ON "winter_route_stops" USING btree ("route_id","property_id");--> statement-breakpoint
CREATE INDEX "winter_routes_org_created_idx" ON "winter_routes" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "winter_routes_org_active_created_idx" ON "winter_routes" USING btree ("organization_id","active","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "winter_runs_storm_route_uq" ON "winter_runs" USING btree ("storm_id","route_id");--> statement-breakpoint
CREATE INDEX "winter_runs_org_created_idx" ON "winter_runs" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "winter_runs_org_storm_created_idx" ON "winter_runs" USING btree ("organization_id","storm_id","created_at","id");--> statement-breakpoint
CREATE INDEX "winter_runs_org_route_created_idx" ON "winter_runs" USING btree ("organization_id","route_id","created_at","id");--> statement-breakpoint
CREATE INDEX "winter_visits_org_run_seq_idx" ON "winter_visits" USING btree ("organization_id","run_id","sequence","id");--> statement-breakpoint
CREATE INDEX "winter_visits_org_unbilled_idx" ON "winter_visits" USING btree ("organization_id","run_id") WHERE "winter_visits"."invoice_id" IS NULL AND "winter_visits"."status" = 'serviced';