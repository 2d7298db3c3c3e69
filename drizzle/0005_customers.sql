CREATE TABLE "customer_search" (
	"customer_id" text PRIMARY KEY NOT NULL,
	"search_text" text NOT NULL,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL
);
--> statement-breakpoint
DROP INDEX "customers_org_created_idx";--> statement-breakpoint
DROP INDEX "customers_search_trgm_idx";--> statement-breakpoint
DROP INDEX "customers_tags_idx";--> statement-breakpoint
DROP INDEX "properties_org_created_idx";--> statement-breakpoint
DROP INDEX "services_org_created_idx";--> statement-breakpoint
ALTER TABLE "customer_search" ADD CONSTRAINT "customer_search_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "customer_search_trgm_idx" ON "customer_search" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "customer_search_tags_idx" ON "customer_search" USING gin ("tags");--> statement-breakpoint
CREATE INDEX "customers_org_live_created_idx" ON "customers" USING btree ("organization_id","created_at","id") WHERE "customers"."deleted_at" IS NULL;--> statement-breakpoint
CREATE INDEX "properties_org_created_idx" ON "properties" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "services_org_created_idx" ON "services" USING btree ("organization_id","created_at","id");