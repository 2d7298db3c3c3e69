CREATE TABLE "customer_search" (
	"customer_id" text PRIMARY KEY NOT NULL,
	"search_text" text NOT NULL
);
--> statement-breakpoint
DROP INDEX "customers_org_created_idx";--> statement-breakpoint
DROP INDEX "customers_search_trgm_idx";--> statement-breakpoint
DROP INDEX "customers_tags_idx";--> statement-breakpoint
ALTER TABLE "customer_search" ADD CONSTRAINT "customer_search_customer_id_customers_id_fk" FOREIGN KEY ("customer_id") REFERENCES "public"."customers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "customer_search_trgm_idx" ON "customer_search" USING gin ("search_text" gin_trgm_ops);--> statement-breakpoint
CREATE INDEX "customers_org_live_created_idx" ON "customers" USING btree ("organization_id","created_at" DESC NULLS LAST,"id" DESC NULLS LAST) WHERE "customers"."deleted_at" IS NULL;