-- A delivery references its endpoint by (organization, endpoint) instead of two keys of their
-- own: the endpoint's id and, separately, the organization's. One foreign key states what the
-- two did not, that a delivery belongs to its endpoint's organization (a tenant can never hold
-- another's delivery, whatever writes the row), and costs one check per inserted delivery
-- instead of two: the fan-out inserts every delivery, and the second check was about a tenth
-- of its time (webhook bench). Deleting an organization still deletes its deliveries: it
-- deletes the endpoints, and they their deliveries.
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_org_id_key" UNIQUE ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_fk"
  FOREIGN KEY ("organization_id", "endpoint_id") REFERENCES "public"."webhook_endpoints"("organization_id", "id")
  ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_endpoint_id_webhook_endpoints_id_fk";
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_organization_id_organizations_id_fk";
