DROP INDEX "estimates_org_customer_idx";--> statement-breakpoint
DROP INDEX "invoices_org_customer_idx";--> statement-breakpoint
DROP INDEX "contracts_org_status_idx";--> statement-breakpoint
DROP INDEX "contracts_org_customer_idx";--> statement-breakpoint
DROP INDEX "properties_org_customer_idx";--> statement-breakpoint
DROP INDEX "jobs_org_status_date_idx";--> statement-breakpoint
DROP INDEX "jobs_org_customer_date_idx";--> statement-breakpoint
DROP INDEX "api_keys_org_idx";--> statement-breakpoint
DROP INDEX "invitations_org_idx";--> statement-breakpoint
DROP INDEX "webhook_deliveries_org_endpoint_idx";--> statement-breakpoint
DROP INDEX "webhook_endpoints_org_created_idx";--> statement-breakpoint
CREATE INDEX "estimates_org_status_created_idx" ON "estimates" USING btree ("organization_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "invoices_org_status_created_idx" ON "invoices" USING btree ("organization_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "customers_org_live_status_created_idx" ON "customers" USING btree ("organization_id","status","created_at","id") WHERE "customers"."deleted_at" IS NULL;--> statement-breakpoint
CREATE INDEX "members_org_created_idx" ON "members" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_org_endpoint_status_idx" ON "webhook_deliveries" USING btree ("organization_id","endpoint_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "estimates_org_customer_idx" ON "estimates" USING btree ("organization_id","customer_id","created_at","id");--> statement-breakpoint
CREATE INDEX "invoices_org_customer_idx" ON "invoices" USING btree ("organization_id","customer_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_org_status_idx" ON "contracts" USING btree ("organization_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_org_customer_idx" ON "contracts" USING btree ("organization_id","customer_id","created_at","id");--> statement-breakpoint
CREATE INDEX "properties_org_customer_idx" ON "properties" USING btree ("organization_id","customer_id","created_at","id");--> statement-breakpoint
CREATE INDEX "jobs_org_status_date_idx" ON "jobs" USING btree ("organization_id","status","scheduled_date","created_at","id");--> statement-breakpoint
CREATE INDEX "jobs_org_customer_date_idx" ON "jobs" USING btree ("organization_id","customer_id","scheduled_date","created_at","id");--> statement-breakpoint
CREATE INDEX "api_keys_org_idx" ON "api_keys" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "invitations_org_idx" ON "invitations" USING btree ("organization_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_org_endpoint_idx" ON "webhook_deliveries" USING btree ("organization_id","endpoint_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_endpoints_org_created_idx" ON "webhook_endpoints" USING btree ("organization_id","created_at","id");