DROP INDEX "estimates_org_created_idx";--> statement-breakpoint
DROP INDEX "invoices_org_created_idx";--> statement-breakpoint
DROP INDEX "contract_templates_org_created_idx";--> statement-breakpoint
DROP INDEX "contracts_org_created_idx";--> statement-breakpoint
CREATE INDEX "estimates_org_created_idx" ON "estimates" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "invoices_org_created_idx" ON "invoices" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contract_templates_org_created_idx" ON "contract_templates" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_org_created_idx" ON "contracts" USING btree ("organization_id","created_at","id");