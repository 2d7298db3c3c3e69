ALTER TABLE "contracts" ADD COLUMN "amends_contract_id" text;--> statement-breakpoint
ALTER TABLE "customer_search" ADD COLUMN "organization_id" text;--> statement-breakpoint
UPDATE "customer_search" s SET "organization_id" = c."organization_id" FROM "customers" c WHERE c."id" = s."customer_id";--> statement-breakpoint
ALTER TABLE "customer_search" ALTER COLUMN "organization_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_amends_contract_id_contracts_id_fk" FOREIGN KEY ("amends_contract_id") REFERENCES "public"."contracts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customer_search" ADD CONSTRAINT "customer_search_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "contracts_org_amends_idx" ON "contracts" USING btree ("organization_id","amends_contract_id");