-- Every tenant table keyed by (organization_id, id), ready to be distributed by organization
-- (operations.md §13, docs in src/db/README.md): the primary key has the organization in front,
-- every unique constraint and unique index includes it, and every foreign key between tenant
-- tables is composite, (organization_id, x_id) -> parent (organization_id, id), so a row can only
-- point at a row of its own organization whatever writes it. Each ON DELETE stays what it was;
-- SET NULL names its column (PostgreSQL 15), so the organization is never nulled with it.
-- Rows are not touched: keys are rebuilt and the new foreign keys validate the rows already there
-- (a reference across organizations would fail this migration, loudly, rather than be kept).
-- The new foreign keys must check every row. Run by the schema owner, a FORCEd tenant policy
-- would hide the rows from their validation (no organization is set here, so none is visible)
-- and each key would accept whatever is there; forcing is lifted for this transaction only
-- and put back at its end (nothing else sees the tables meanwhile: ALTER TABLE holds them).
CREATE TEMP TABLE "tenant_keys_forced" ON COMMIT DROP AS
  SELECT c.oid::regclass AS t FROM pg_class c
  WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relforcerowsecurity;
--> statement-breakpoint
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT t FROM tenant_keys_forced LOOP
    EXECUTE format('ALTER TABLE %s NO FORCE ROW LEVEL SECURITY', r.t);
  END LOOP;
END $$;
--> statement-breakpoint
-- Drop the single-column foreign keys between tenant tables (and the one composite key, re-made on the new primary key).
ALTER TABLE "bill_lines" DROP CONSTRAINT "bill_lines_bill_id_bills_id_fk";
--> statement-breakpoint
ALTER TABLE "bill_payment_allocations" DROP CONSTRAINT "bill_payment_allocations_bill_id_bills_id_fk";
--> statement-breakpoint
ALTER TABLE "bill_payment_allocations" DROP CONSTRAINT "bill_payment_allocations_bill_payment_id_bill_payments_id_fk";
--> statement-breakpoint
ALTER TABLE "bill_payments" DROP CONSTRAINT "bill_payments_vendor_id_vendors_id_fk";
--> statement-breakpoint
ALTER TABLE "bills" DROP CONSTRAINT "bills_purchase_order_id_purchase_orders_id_fk";
--> statement-breakpoint
ALTER TABLE "bills" DROP CONSTRAINT "bills_vendor_id_vendors_id_fk";
--> statement-breakpoint
ALTER TABLE "contract_activity" DROP CONSTRAINT "contract_activity_contract_id_contracts_id_fk";
--> statement-breakpoint
ALTER TABLE "contracts" DROP CONSTRAINT "contracts_amends_contract_id_contracts_id_fk";
--> statement-breakpoint
ALTER TABLE "contracts" DROP CONSTRAINT "contracts_customer_id_customers_id_fk";
--> statement-breakpoint
ALTER TABLE "contracts" DROP CONSTRAINT "contracts_property_id_properties_id_fk";
--> statement-breakpoint
ALTER TABLE "contracts" DROP CONSTRAINT "contracts_template_id_contract_templates_id_fk";
--> statement-breakpoint
ALTER TABLE "crew_latest_locations" DROP CONSTRAINT "crew_latest_locations_member_id_members_id_fk";
--> statement-breakpoint
ALTER TABLE "crew_locations" DROP CONSTRAINT "crew_locations_member_id_members_id_fk";
--> statement-breakpoint
ALTER TABLE "customer_search" DROP CONSTRAINT "customer_search_customer_id_customers_id_fk";
--> statement-breakpoint
ALTER TABLE "deposit_payments" DROP CONSTRAINT "deposit_payments_deposit_id_deposits_id_fk";
--> statement-breakpoint
ALTER TABLE "deposit_payments" DROP CONSTRAINT "deposit_payments_payment_id_payments_id_fk";
--> statement-breakpoint
ALTER TABLE "device_tokens" DROP CONSTRAINT "device_tokens_member_id_members_id_fk";
--> statement-breakpoint
ALTER TABLE "equipment_assignments" DROP CONSTRAINT "equipment_assignments_crew_id_crews_id_fk";
--> statement-breakpoint
ALTER TABLE "equipment_assignments" DROP CONSTRAINT "equipment_assignments_equipment_id_equipment_id_fk";
--> statement-breakpoint
ALTER TABLE "equipment_assignments" DROP CONSTRAINT "equipment_assignments_job_id_jobs_id_fk";
--> statement-breakpoint
ALTER TABLE "equipment_assignments" DROP CONSTRAINT "equipment_assignments_member_id_members_id_fk";
--> statement-breakpoint
ALTER TABLE "estimate_line_items" DROP CONSTRAINT "estimate_line_items_estimate_id_estimates_id_fk";
--> statement-breakpoint
ALTER TABLE "estimate_line_items" DROP CONSTRAINT "estimate_line_items_service_id_services_id_fk";
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_customer_id_customers_id_fk";
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_invoice_id_invoices_id_fk";
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_job_id_jobs_id_fk";
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_property_id_properties_id_fk";
--> statement-breakpoint
ALTER TABLE "invoice_billing_keys" DROP CONSTRAINT "invoice_billing_keys_invoice_id_invoices_id_fk";
--> statement-breakpoint
ALTER TABLE "invoice_line_items" DROP CONSTRAINT "invoice_line_items_invoice_id_invoices_id_fk";
--> statement-breakpoint
ALTER TABLE "invoice_line_items" DROP CONSTRAINT "invoice_line_items_service_id_services_id_fk";
--> statement-breakpoint
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_customer_id_customers_id_fk";
--> statement-breakpoint
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_property_id_properties_id_fk";
--> statement-breakpoint
ALTER TABLE "job_activity" DROP CONSTRAINT "job_activity_job_id_jobs_id_fk";
--> statement-breakpoint
ALTER TABLE "job_checklist_items" DROP CONSTRAINT "job_checklist_items_job_id_jobs_id_fk";
--> statement-breakpoint
ALTER TABLE "job_schedule_skips" DROP CONSTRAINT "job_schedule_skips_schedule_id_job_schedules_id_fk";
--> statement-breakpoint
ALTER TABLE "job_schedules" DROP CONSTRAINT "job_schedules_contract_id_contracts_id_fk";
--> statement-breakpoint
ALTER TABLE "job_schedules" DROP CONSTRAINT "job_schedules_crew_id_crews_id_fk";
--> statement-breakpoint
ALTER TABLE "job_schedules" DROP CONSTRAINT "job_schedules_customer_id_customers_id_fk";
--> statement-breakpoint
ALTER TABLE "job_schedules" DROP CONSTRAINT "job_schedules_property_id_properties_id_fk";
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_crew_id_crews_id_fk";
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_customer_id_customers_id_fk";
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_invoice_id_invoices_id_fk";
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_property_id_properties_id_fk";
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_schedule_id_job_schedules_id_fk";
--> statement-breakpoint
ALTER TABLE "ledger_lines" DROP CONSTRAINT "ledger_lines_entry_id_ledger_entries_id_fk";
--> statement-breakpoint
ALTER TABLE "maintenance_logs" DROP CONSTRAINT "maintenance_logs_equipment_id_equipment_id_fk";
--> statement-breakpoint
ALTER TABLE "maintenance_logs" DROP CONSTRAINT "maintenance_logs_plan_id_maintenance_plans_id_fk";
--> statement-breakpoint
ALTER TABLE "maintenance_plans" DROP CONSTRAINT "maintenance_plans_equipment_id_equipment_id_fk";
--> statement-breakpoint
ALTER TABLE "payment_intents" DROP CONSTRAINT "payment_intents_invoice_id_invoices_id_fk";
--> statement-breakpoint
ALTER TABLE "payment_intents" DROP CONSTRAINT "payment_intents_payment_id_payments_id_fk";
--> statement-breakpoint
ALTER TABLE "payment_refunds" DROP CONSTRAINT "payment_refunds_payment_id_payments_id_fk";
--> statement-breakpoint
ALTER TABLE "payments" DROP CONSTRAINT "payments_invoice_id_invoices_id_fk";
--> statement-breakpoint
ALTER TABLE "properties" DROP CONSTRAINT "properties_customer_id_customers_id_fk";
--> statement-breakpoint
ALTER TABLE "purchase_order_lines" DROP CONSTRAINT "purchase_order_lines_purchase_order_id_purchase_orders_id_fk";
--> statement-breakpoint
ALTER TABLE "purchase_orders" DROP CONSTRAINT "purchase_orders_job_id_jobs_id_fk";
--> statement-breakpoint
ALTER TABLE "purchase_orders" DROP CONSTRAINT "purchase_orders_vendor_id_vendors_id_fk";
--> statement-breakpoint
ALTER TABLE "time_entries" DROP CONSTRAINT "time_entries_job_id_jobs_id_fk";
--> statement-breakpoint
ALTER TABLE "time_entries" DROP CONSTRAINT "time_entries_member_id_members_id_fk";
--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk";
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_endpoint_fk";
--> statement-breakpoint
ALTER TABLE "winter_route_stops" DROP CONSTRAINT "winter_route_stops_property_id_properties_id_fk";
--> statement-breakpoint
ALTER TABLE "winter_route_stops" DROP CONSTRAINT "winter_route_stops_route_id_winter_routes_id_fk";
--> statement-breakpoint
ALTER TABLE "winter_routes" DROP CONSTRAINT "winter_routes_crew_id_crews_id_fk";
--> statement-breakpoint
ALTER TABLE "winter_runs" DROP CONSTRAINT "winter_runs_route_id_winter_routes_id_fk";
--> statement-breakpoint
ALTER TABLE "winter_runs" DROP CONSTRAINT "winter_runs_storm_id_storms_id_fk";
--> statement-breakpoint
ALTER TABLE "winter_visits" DROP CONSTRAINT "winter_visits_customer_id_customers_id_fk";
--> statement-breakpoint
ALTER TABLE "winter_visits" DROP CONSTRAINT "winter_visits_invoice_id_invoices_id_fk";
--> statement-breakpoint
ALTER TABLE "winter_visits" DROP CONSTRAINT "winter_visits_property_id_properties_id_fk";
--> statement-breakpoint
ALTER TABLE "winter_visits" DROP CONSTRAINT "winter_visits_run_id_winter_runs_id_fk";
--> statement-breakpoint
ALTER TABLE "workflow_runs" DROP CONSTRAINT "workflow_runs_workflow_id_workflows_id_fk";
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "webhook_endpoints_org_id_key";
--> statement-breakpoint
-- Primary keys: (organization_id, id), or the organization in front of the table's own key.
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_pkey", ADD CONSTRAINT "api_keys_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "bill_lines" DROP CONSTRAINT "bill_lines_pkey", ADD CONSTRAINT "bill_lines_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "bill_payment_allocations" DROP CONSTRAINT "bill_payment_allocations_pkey", ADD CONSTRAINT "bill_payment_allocations_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "bill_payments" DROP CONSTRAINT "bill_payments_pkey", ADD CONSTRAINT "bill_payments_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "bills" DROP CONSTRAINT "bills_pkey", ADD CONSTRAINT "bills_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "contract_activity" DROP CONSTRAINT "contract_activity_pkey", ADD CONSTRAINT "contract_activity_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "contract_templates" DROP CONSTRAINT "contract_templates_pkey", ADD CONSTRAINT "contract_templates_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "contracts" DROP CONSTRAINT "contracts_pkey", ADD CONSTRAINT "contracts_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "crews" DROP CONSTRAINT "crews_pkey", ADD CONSTRAINT "crews_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "customer_search" DROP CONSTRAINT "customer_search_pkey", ADD CONSTRAINT "customer_search_pkey" PRIMARY KEY ("organization_id", "customer_id");
--> statement-breakpoint
ALTER TABLE "customers" DROP CONSTRAINT "customers_pkey", ADD CONSTRAINT "customers_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "data_exports" DROP CONSTRAINT "data_exports_pkey", ADD CONSTRAINT "data_exports_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "deposit_payments" DROP CONSTRAINT "deposit_payments_deposit_id_payment_id_pk", ADD CONSTRAINT "deposit_payments_pkey" PRIMARY KEY ("organization_id", "deposit_id", "payment_id");
--> statement-breakpoint
ALTER TABLE "deposits" DROP CONSTRAINT "deposits_pkey", ADD CONSTRAINT "deposits_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "device_tokens" DROP CONSTRAINT "device_tokens_pkey", ADD CONSTRAINT "device_tokens_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "equipment" DROP CONSTRAINT "equipment_pkey", ADD CONSTRAINT "equipment_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "equipment_assignments" DROP CONSTRAINT "equipment_assignments_pkey", ADD CONSTRAINT "equipment_assignments_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "estimate_line_items" DROP CONSTRAINT "estimate_line_items_pkey", ADD CONSTRAINT "estimate_line_items_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_pkey", ADD CONSTRAINT "estimates_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "events" DROP CONSTRAINT "events_pkey", ADD CONSTRAINT "events_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "invitations" DROP CONSTRAINT "invitations_pkey", ADD CONSTRAINT "invitations_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "invoice_line_items" DROP CONSTRAINT "invoice_line_items_pkey", ADD CONSTRAINT "invoice_line_items_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_pkey", ADD CONSTRAINT "invoices_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "job_activity" DROP CONSTRAINT "job_activity_pkey", ADD CONSTRAINT "job_activity_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "job_checklist_items" DROP CONSTRAINT "job_checklist_items_pkey", ADD CONSTRAINT "job_checklist_items_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "job_schedule_skips" DROP CONSTRAINT "job_schedule_skips_pk", ADD CONSTRAINT "job_schedule_skips_pkey" PRIMARY KEY ("organization_id", "schedule_id", "occurrence_date");
--> statement-breakpoint
ALTER TABLE "job_schedules" DROP CONSTRAINT "job_schedules_pkey", ADD CONSTRAINT "job_schedules_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_pkey", ADD CONSTRAINT "jobs_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_pkey", ADD CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "ledger_lines" DROP CONSTRAINT "ledger_lines_pkey", ADD CONSTRAINT "ledger_lines_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "mail_jobs" DROP CONSTRAINT "mail_jobs_pkey", ADD CONSTRAINT "mail_jobs_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "maintenance_logs" DROP CONSTRAINT "maintenance_logs_pkey", ADD CONSTRAINT "maintenance_logs_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "maintenance_plans" DROP CONSTRAINT "maintenance_plans_pkey", ADD CONSTRAINT "maintenance_plans_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "members" DROP CONSTRAINT "members_pkey", ADD CONSTRAINT "members_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "payment_intents" DROP CONSTRAINT "payment_intents_pkey", ADD CONSTRAINT "payment_intents_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "payment_refunds" DROP CONSTRAINT "payment_refunds_pkey", ADD CONSTRAINT "payment_refunds_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "payments" DROP CONSTRAINT "payments_pkey", ADD CONSTRAINT "payments_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "portal_tokens" DROP CONSTRAINT "portal_tokens_pkey", ADD CONSTRAINT "portal_tokens_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "properties" DROP CONSTRAINT "properties_pkey", ADD CONSTRAINT "properties_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "purchase_order_lines" DROP CONSTRAINT "purchase_order_lines_pkey", ADD CONSTRAINT "purchase_order_lines_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "purchase_orders" DROP CONSTRAINT "purchase_orders_pkey", ADD CONSTRAINT "purchase_orders_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "services" DROP CONSTRAINT "services_pkey", ADD CONSTRAINT "services_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "storms" DROP CONSTRAINT "storms_pkey", ADD CONSTRAINT "storms_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "time_entries" DROP CONSTRAINT "time_entries_pkey", ADD CONSTRAINT "time_entries_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "vendors" DROP CONSTRAINT "vendors_pkey", ADD CONSTRAINT "vendors_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "webhook_attempts" DROP CONSTRAINT "webhook_attempts_pkey", ADD CONSTRAINT "webhook_attempts_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_pkey", ADD CONSTRAINT "webhook_deliveries_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "webhook_endpoints_pkey", ADD CONSTRAINT "webhook_endpoints_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_route_stops" DROP CONSTRAINT "winter_route_stops_pkey", ADD CONSTRAINT "winter_route_stops_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_routes" DROP CONSTRAINT "winter_routes_pkey", ADD CONSTRAINT "winter_routes_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_runs" DROP CONSTRAINT "winter_runs_pkey", ADD CONSTRAINT "winter_runs_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_visits" DROP CONSTRAINT "winter_visits_pkey", ADD CONSTRAINT "winter_visits_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "workflow_runs" DROP CONSTRAINT "workflow_runs_pkey", ADD CONSTRAINT "workflow_runs_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "workflows" DROP CONSTRAINT "workflows_pkey", ADD CONSTRAINT "workflows_pkey" PRIMARY KEY ("organization_id", "id");
--> statement-breakpoint
-- Unique constraints and indexes that lacked the organization. Secret hashes (API keys, device
-- and portal tokens) are unique within their organization, with a plain index on the hash alone
-- so a lookup by hash that arrives without an organization stays one index probe.
ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_key_hash_unique", ADD CONSTRAINT "api_keys_org_key_hash_unique" UNIQUE ("organization_id", "key_hash");
--> statement-breakpoint
CREATE INDEX "api_keys_key_hash_idx" ON "api_keys" ("key_hash");
--> statement-breakpoint
ALTER TABLE "device_tokens" DROP CONSTRAINT "device_tokens_token_hash_unique", ADD CONSTRAINT "device_tokens_org_token_hash_unique" UNIQUE ("organization_id", "token_hash");
--> statement-breakpoint
CREATE INDEX "device_tokens_token_hash_idx" ON "device_tokens" ("token_hash");
--> statement-breakpoint
ALTER TABLE "portal_tokens" DROP CONSTRAINT "portal_tokens_token_hash_unique", ADD CONSTRAINT "portal_tokens_org_token_hash_unique" UNIQUE ("organization_id", "token_hash");
--> statement-breakpoint
CREATE INDEX "portal_tokens_token_hash_idx" ON "portal_tokens" ("token_hash");
--> statement-breakpoint
DROP INDEX "equipment_assignments_open_uq";
--> statement-breakpoint
CREATE UNIQUE INDEX "equipment_assignments_open_uq" ON "equipment_assignments" ("organization_id", "equipment_id") WHERE "checked_in_at" IS NULL;
--> statement-breakpoint
DROP INDEX "jobs_schedule_occurrence_uq";
--> statement-breakpoint
CREATE UNIQUE INDEX "jobs_schedule_occurrence_uq" ON "jobs" ("organization_id", "schedule_id", "occurrence_date");
--> statement-breakpoint
DROP INDEX "winter_route_stops_route_property_uq";
--> statement-breakpoint
CREATE UNIQUE INDEX "winter_route_stops_route_property_uq" ON "winter_route_stops" ("organization_id", "route_id", "property_id");
--> statement-breakpoint
DROP INDEX "winter_runs_storm_route_uq";
--> statement-breakpoint
CREATE UNIQUE INDEX "winter_runs_storm_route_uq" ON "winter_runs" ("organization_id", "storm_id", "route_id");
--> statement-breakpoint
DROP INDEX "workflow_runs_workflow_event_key";
--> statement-breakpoint
CREATE UNIQUE INDEX "workflow_runs_workflow_event_key" ON "workflow_runs" ("organization_id", "workflow_id", "event_id");
--> statement-breakpoint
-- Lookups by id alone that arrive without an organization (an invitation's id is its capability):
-- a primary key with the organization in front cannot serve them.
CREATE INDEX "invitations_id_idx" ON "invitations" ("id");
--> statement-breakpoint
-- Composite foreign keys between tenant tables (their ON DELETE unchanged).
ALTER TABLE "bill_lines" ADD CONSTRAINT "bill_lines_bill_id_fk" FOREIGN KEY ("organization_id", "bill_id") REFERENCES "bills" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "bill_payment_allocations" ADD CONSTRAINT "bill_payment_allocations_bill_id_fk" FOREIGN KEY ("organization_id", "bill_id") REFERENCES "bills" ("organization_id", "id") ON DELETE RESTRICT;
--> statement-breakpoint
ALTER TABLE "bill_payment_allocations" ADD CONSTRAINT "bill_payment_allocations_bill_payment_id_fk" FOREIGN KEY ("organization_id", "bill_payment_id") REFERENCES "bill_payments" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "bill_payments" ADD CONSTRAINT "bill_payments_vendor_id_fk" FOREIGN KEY ("organization_id", "vendor_id") REFERENCES "vendors" ("organization_id", "id") ON DELETE RESTRICT;
--> statement-breakpoint
ALTER TABLE "bills" ADD CONSTRAINT "bills_purchase_order_id_fk" FOREIGN KEY ("organization_id", "purchase_order_id") REFERENCES "purchase_orders" ("organization_id", "id") ON DELETE SET NULL ("purchase_order_id");
--> statement-breakpoint
ALTER TABLE "bills" ADD CONSTRAINT "bills_vendor_id_fk" FOREIGN KEY ("organization_id", "vendor_id") REFERENCES "vendors" ("organization_id", "id") ON DELETE RESTRICT;
--> statement-breakpoint
ALTER TABLE "contract_activity" ADD CONSTRAINT "contract_activity_contract_id_fk" FOREIGN KEY ("organization_id", "contract_id") REFERENCES "contracts" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_amends_contract_id_fk" FOREIGN KEY ("organization_id", "amends_contract_id") REFERENCES "contracts" ("organization_id", "id") ON DELETE SET NULL ("amends_contract_id");
--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id") ON DELETE SET NULL ("property_id");
--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_template_id_fk" FOREIGN KEY ("organization_id", "template_id") REFERENCES "contract_templates" ("organization_id", "id") ON DELETE SET NULL ("template_id");
--> statement-breakpoint
ALTER TABLE "crew_latest_locations" ADD CONSTRAINT "crew_latest_locations_member_id_fk" FOREIGN KEY ("organization_id", "member_id") REFERENCES "members" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "crew_locations" ADD CONSTRAINT "crew_locations_member_id_fk" FOREIGN KEY ("organization_id", "member_id") REFERENCES "members" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "customer_search" ADD CONSTRAINT "customer_search_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "deposit_payments" ADD CONSTRAINT "deposit_payments_deposit_id_fk" FOREIGN KEY ("organization_id", "deposit_id") REFERENCES "deposits" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "deposit_payments" ADD CONSTRAINT "deposit_payments_payment_id_fk" FOREIGN KEY ("organization_id", "payment_id") REFERENCES "payments" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "device_tokens" ADD CONSTRAINT "device_tokens_member_id_fk" FOREIGN KEY ("organization_id", "member_id") REFERENCES "members" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "equipment_assignments" ADD CONSTRAINT "equipment_assignments_crew_id_fk" FOREIGN KEY ("organization_id", "crew_id") REFERENCES "crews" ("organization_id", "id") ON DELETE SET NULL ("crew_id");
--> statement-breakpoint
ALTER TABLE "equipment_assignments" ADD CONSTRAINT "equipment_assignments_equipment_id_fk" FOREIGN KEY ("organization_id", "equipment_id") REFERENCES "equipment" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "equipment_assignments" ADD CONSTRAINT "equipment_assignments_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id") ON DELETE SET NULL ("job_id");
--> statement-breakpoint
ALTER TABLE "equipment_assignments" ADD CONSTRAINT "equipment_assignments_member_id_fk" FOREIGN KEY ("organization_id", "member_id") REFERENCES "members" ("organization_id", "id") ON DELETE SET NULL ("member_id");
--> statement-breakpoint
ALTER TABLE "estimate_line_items" ADD CONSTRAINT "estimate_line_items_estimate_id_fk" FOREIGN KEY ("organization_id", "estimate_id") REFERENCES "estimates" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "estimate_line_items" ADD CONSTRAINT "estimate_line_items_service_id_fk" FOREIGN KEY ("organization_id", "service_id") REFERENCES "services" ("organization_id", "id") ON DELETE SET NULL ("service_id");
--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id") ON DELETE SET NULL ("invoice_id");
--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id") ON DELETE SET NULL ("job_id");
--> statement-breakpoint
ALTER TABLE "estimates" ADD CONSTRAINT "estimates_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id") ON DELETE SET NULL ("property_id");
--> statement-breakpoint
ALTER TABLE "invoice_billing_keys" ADD CONSTRAINT "invoice_billing_keys_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id") ON DELETE SET NULL ("invoice_id");
--> statement-breakpoint
ALTER TABLE "invoice_line_items" ADD CONSTRAINT "invoice_line_items_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "invoice_line_items" ADD CONSTRAINT "invoice_line_items_service_id_fk" FOREIGN KEY ("organization_id", "service_id") REFERENCES "services" ("organization_id", "id") ON DELETE SET NULL ("service_id");
--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id") ON DELETE SET NULL ("property_id");
--> statement-breakpoint
ALTER TABLE "job_activity" ADD CONSTRAINT "job_activity_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "job_checklist_items" ADD CONSTRAINT "job_checklist_items_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "job_schedule_skips" ADD CONSTRAINT "job_schedule_skips_schedule_id_fk" FOREIGN KEY ("organization_id", "schedule_id") REFERENCES "job_schedules" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_contract_id_fk" FOREIGN KEY ("organization_id", "contract_id") REFERENCES "contracts" ("organization_id", "id") ON DELETE SET NULL ("contract_id");
--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_crew_id_fk" FOREIGN KEY ("organization_id", "crew_id") REFERENCES "crews" ("organization_id", "id") ON DELETE SET NULL ("crew_id");
--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "job_schedules" ADD CONSTRAINT "job_schedules_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id") ON DELETE SET NULL ("property_id");
--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_crew_id_fk" FOREIGN KEY ("organization_id", "crew_id") REFERENCES "crews" ("organization_id", "id") ON DELETE SET NULL ("crew_id");
--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id") ON DELETE SET NULL ("invoice_id");
--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id") ON DELETE SET NULL ("property_id");
--> statement-breakpoint
ALTER TABLE "jobs" ADD CONSTRAINT "jobs_schedule_id_fk" FOREIGN KEY ("organization_id", "schedule_id") REFERENCES "job_schedules" ("organization_id", "id") ON DELETE SET NULL ("schedule_id");
--> statement-breakpoint
ALTER TABLE "ledger_lines" ADD CONSTRAINT "ledger_lines_entry_id_fk" FOREIGN KEY ("organization_id", "entry_id") REFERENCES "ledger_entries" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "maintenance_logs" ADD CONSTRAINT "maintenance_logs_equipment_id_fk" FOREIGN KEY ("organization_id", "equipment_id") REFERENCES "equipment" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "maintenance_logs" ADD CONSTRAINT "maintenance_logs_plan_id_fk" FOREIGN KEY ("organization_id", "plan_id") REFERENCES "maintenance_plans" ("organization_id", "id") ON DELETE SET NULL ("plan_id");
--> statement-breakpoint
ALTER TABLE "maintenance_plans" ADD CONSTRAINT "maintenance_plans_equipment_id_fk" FOREIGN KEY ("organization_id", "equipment_id") REFERENCES "equipment" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "payment_intents" ADD CONSTRAINT "payment_intents_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "payment_intents" ADD CONSTRAINT "payment_intents_payment_id_fk" FOREIGN KEY ("organization_id", "payment_id") REFERENCES "payments" ("organization_id", "id") ON DELETE SET NULL ("payment_id");
--> statement-breakpoint
ALTER TABLE "payment_refunds" ADD CONSTRAINT "payment_refunds_payment_id_fk" FOREIGN KEY ("organization_id", "payment_id") REFERENCES "payments" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "properties" ADD CONSTRAINT "properties_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "purchase_order_lines" ADD CONSTRAINT "purchase_order_lines_purchase_order_id_fk" FOREIGN KEY ("organization_id", "purchase_order_id") REFERENCES "purchase_orders" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "purchase_orders" ADD CONSTRAINT "purchase_orders_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id") ON DELETE SET NULL ("job_id");
--> statement-breakpoint
ALTER TABLE "purchase_orders" ADD CONSTRAINT "purchase_orders_vendor_id_fk" FOREIGN KEY ("organization_id", "vendor_id") REFERENCES "vendors" ("organization_id", "id") ON DELETE RESTRICT;
--> statement-breakpoint
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id") ON DELETE SET NULL ("job_id");
--> statement-breakpoint
ALTER TABLE "time_entries" ADD CONSTRAINT "time_entries_member_id_fk" FOREIGN KEY ("organization_id", "member_id") REFERENCES "members" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_fk" FOREIGN KEY ("organization_id", "delivery_id") REFERENCES "webhook_deliveries" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_endpoint_fk" FOREIGN KEY ("organization_id", "endpoint_id") REFERENCES "webhook_endpoints" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "winter_route_stops" ADD CONSTRAINT "winter_route_stops_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "winter_route_stops" ADD CONSTRAINT "winter_route_stops_route_id_fk" FOREIGN KEY ("organization_id", "route_id") REFERENCES "winter_routes" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "winter_routes" ADD CONSTRAINT "winter_routes_crew_id_fk" FOREIGN KEY ("organization_id", "crew_id") REFERENCES "crews" ("organization_id", "id") ON DELETE SET NULL ("crew_id");
--> statement-breakpoint
ALTER TABLE "winter_runs" ADD CONSTRAINT "winter_runs_route_id_fk" FOREIGN KEY ("organization_id", "route_id") REFERENCES "winter_routes" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_runs" ADD CONSTRAINT "winter_runs_storm_id_fk" FOREIGN KEY ("organization_id", "storm_id") REFERENCES "storms" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id") ON DELETE SET NULL ("invoice_id");
--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_visits" ADD CONSTRAINT "winter_visits_run_id_fk" FOREIGN KEY ("organization_id", "run_id") REFERENCES "winter_runs" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "workflow_runs" ADD CONSTRAINT "workflow_runs_workflow_id_fk" FOREIGN KEY ("organization_id", "workflow_id") REFERENCES "workflows" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
-- The webhook worker's functions (0028, 0029) find deliveries and endpoints by (organization, id),
-- the new primary keys: by id alone a key with the organization in front is read whole. The
-- organization is on every endpoint row and every claim; the worker now sends it with each
-- result again (0029 had dropped it), one short string per delivery.
CREATE OR REPLACE FUNCTION webhook_claim(p_limit integer, p_per_endpoint integer, p_lease_ms integer, p_answered text[], p_done text[] DEFAULT '{}'::text[], p_held text[] DEFAULT '{}'::text[])
 RETURNS TABLE(id text, organization_id text, endpoint_id text, event text, body text, attempt_count integer, due text, url text, secret_enc text, previous_secret_enc text, previous_valid boolean)
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'public', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
 SET enable_seqscan TO 'off'
 SET enable_bitmapscan TO 'off'
AS $$
#variable_conflict use_column
DECLARE
  locked text[];
  locked_orgs text[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  -- Endpoints dealt round-robin over organizations (each one's first before anyone's second).
  SELECT array_agg(x.id), array_agg(x.organization_id) INTO locked, locked_orgs FROM (
    SELECT e.id, e.organization_id FROM webhook_endpoints e
    WHERE (e.organization_id, e.id) IN (
      SELECT t.organization_id, t.id FROM (
        SELECT c.id, c.organization_id, row_number() OVER (PARTITION BY c.organization_id ORDER BY random()) AS turn
        FROM webhook_endpoints c
        -- Its claims in flight: listed, the lease holding, and either one the caller holds
        -- or the delivery still as it was claimed (one key probe each).
        -- (OFFSET 0: computed once per endpoint, not once for each of its two uses.)
        CROSS JOIN LATERAL (
          SELECT ARRAY(
            SELECT l.id FROM unnest(c.inflight_ids, c.inflight_due, c.inflight_until) AS l(id, due, until)
            WHERE l.until > now() AND l.id <> ALL(p_done)
              AND (l.id = ANY(p_held) OR l.id = ANY(p_answered) OR EXISTS (
                SELECT 1 FROM webhook_deliveries f
                WHERE f.organization_id = c.organization_id AND f.id = l.id
                  AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due))) AS ids
          OFFSET 0
        ) busy
        CROSS JOIN LATERAL webhook_due_start(c.due_from, c.due_from_id, c.due_margin_at, c.due_scanned_at) AS h
        CROSS JOIN LATERAL (
          SELECT 1 FROM webhook_deliveries d
          WHERE d.endpoint_id = c.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
            AND (d.next_attempt_at, d.id) > (h.at, h.id)
            AND d.id <> ALL(busy.ids)
          LIMIT 1) due
        WHERE c.active AND (c.paused_until IS NULL OR c.paused_until <= now())
          AND (SELECT count(*) FROM unnest(busy.ids) AS b(id) WHERE b.id <> ALL(p_answered)) < p_per_endpoint
          AND (c.rate_limit_per_second IS NULL OR least(c.rate_limit_per_second::float8,
                 COALESCE(c.rate_tokens, c.rate_limit_per_second::float8)
                 + c.rate_limit_per_second * extract(epoch FROM now() - COALESCE(c.rate_refilled_at, now()))) >= 1)
      ) t
      ORDER BY t.turn, random()
      LIMIT p_limit)
    FOR NO KEY UPDATE SKIP LOCKED) x;
  IF locked IS NULL THEN
    RETURN;
  END IF;
  -- Fresh snapshot: room per endpoint (cap minus in flight, rate tokens), its oldest due
  -- deliveries up to that room dealt round-robin within the organization, leased on the
  -- endpoint row.
  RETURN QUERY
  WITH eps AS MATERIALIZED (
    SELECT e.id, e.organization_id, e.inflight_ids, e.inflight_due, e.inflight_until,
           h.at AS hint_at, h.id AS hint_id, h.kind AS hint_kind,
           CASE WHEN e.rate_limit_per_second IS NULL THEN NULL ELSE least(e.rate_limit_per_second::float8,
             COALESCE(e.rate_tokens, e.rate_limit_per_second::float8)
             + e.rate_limit_per_second * extract(epoch FROM now() - COALESCE(e.rate_refilled_at, now()))) END AS tokens,
           -- Positions in the lists of the claims still in flight (as above); the others are
           -- over and are dropped from the lists below.
           ARRAY(SELECT l.n::int FROM unnest(e.inflight_ids, e.inflight_due, e.inflight_until) WITH ORDINALITY
                   AS l(id, due, until, n)
                 WHERE l.until > now() AND l.id <> ALL(p_done)
                   AND (l.id = ANY(p_held) OR l.id = ANY(p_answered) OR EXISTS (
                     SELECT 1 FROM webhook_deliveries f
                     WHERE f.organization_id = e.organization_id AND f.id = l.id
                       AND f.status NOT IN ('succeeded', 'dead') AND f.next_attempt_at = l.due))) AS live
    FROM unnest(locked_orgs, locked) AS k(org, eid)
    JOIN webhook_endpoints e ON e.organization_id = k.org AND e.id = k.eid
    CROSS JOIN LATERAL webhook_due_start(e.due_from, e.due_from_id, e.due_margin_at, e.due_scanned_at) AS h
    WHERE e.active AND (e.paused_until IS NULL OR e.paused_until <= now())
  ), room AS (
    SELECT eps.*, busy.ids AS busy, f.free,
           greatest(0, least(f.free, COALESCE(floor(eps.tokens)::int, f.free))) AS n
    FROM eps
    CROSS JOIN LATERAL (SELECT ARRAY(SELECT eps.inflight_ids[k] FROM unnest(eps.live) AS k)) AS busy(ids)
    CROSS JOIN LATERAL (
      SELECT p_per_endpoint - (SELECT count(*) FROM unnest(busy.ids) AS i(id) WHERE i.id <> ALL(p_answered))::int
    ) AS f(free)
  ), picks AS (
    -- Each endpoint's oldest due deliveries up to its room, past those in flight: one range
    -- of webhook_deliveries_endpoint_due_idx each. No row locks: no other claim reads this
    -- endpoint's deliveries while its row is locked.
    SELECT p.id, r.id AS endpoint_id, r.organization_id, p.next_attempt_at,
           row_number() OVER (PARTITION BY r.id ORDER BY p.next_attempt_at, p.id) AS rn
    FROM room r CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at
      FROM webhook_deliveries d
      WHERE d.endpoint_id = r.id AND d.status IN ('pending', 'failed') AND d.next_attempt_at <= now()
        AND (d.next_attempt_at, d.id) > (r.hint_at, r.hint_id) AND d.id <> ALL(r.busy)
      ORDER BY d.next_attempt_at, d.id
      LIMIT r.n
    ) p
  ), chosen AS (
    SELECT s.id, s.endpoint_id, s.organization_id, s.next_attempt_at FROM (
      SELECT picks.*, row_number() OVER (PARTITION BY picks.organization_id ORDER BY picks.rn, random()) AS seq
      FROM picks
    ) s
    ORDER BY s.seq, random()
    LIMIT p_limit
  ), tracked AS (
    -- Written back on the endpoint row (locked above), one update per endpoint: its claims
    -- in flight (those still in flight plus these, each with its due time and lease), the
    -- rate tokens spent, and where its next claim may start reading the due index (just
    -- after the newest delivery this one claimed; the time of a margin read or of a read
    -- from the start).
    UPDATE webhook_endpoints e
    SET inflight_ids = r.busy || c.ids,
        inflight_due = ARRAY(SELECT r.inflight_due[k] FROM unnest(r.live) AS k) || c.dues,
        inflight_until = ARRAY(SELECT r.inflight_until[k] FROM unnest(r.live) AS k)
          || array_fill(now() + make_interval(secs => p_lease_ms::double precision / 1000), ARRAY[c.n]),
        rate_tokens = CASE WHEN r.tokens IS NULL THEN e.rate_tokens ELSE r.tokens - c.n END,
        rate_refilled_at = CASE WHEN r.tokens IS NULL THEN e.rate_refilled_at ELSE now() END,
        due_from = c.newest_at,
        due_from_id = c.newest_id,
        due_margin_at = CASE WHEN r.hint_kind <> 'exact' THEN now() ELSE e.due_margin_at END,
        due_scanned_at = CASE WHEN r.hint_kind = 'start' THEN now() ELSE e.due_scanned_at END
    FROM room r,
         (SELECT chosen.endpoint_id, count(*)::int AS n, array_agg(chosen.id) AS ids,
                 array_agg(chosen.next_attempt_at) AS dues,
                 (array_agg(chosen.next_attempt_at ORDER BY chosen.next_attempt_at DESC, chosen.id DESC))[1] AS newest_at,
                 (array_agg(chosen.id ORDER BY chosen.next_attempt_at DESC, chosen.id DESC))[1] AS newest_id
          FROM chosen GROUP BY chosen.endpoint_id) c
    WHERE e.organization_id = r.organization_id AND e.id = r.id AND c.endpoint_id = r.id
  )
  SELECT d.id, d.organization_id, d.endpoint_id, d.event, d.body, d.attempt_count, d.next_attempt_at::text,
         e.url, e.secret_enc, e.previous_secret_enc,
         (e.previous_secret_expires_at IS NOT NULL AND e.previous_secret_expires_at > now())
  -- One primary-key probe per chosen delivery, and per its endpoint, each by (organization, id).
  FROM chosen ck
  JOIN webhook_deliveries d ON d.organization_id = ck.organization_id AND d.id = ck.id
  JOIN webhook_endpoints e ON e.organization_id = d.organization_id AND e.id = d.endpoint_id;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION webhook_record_successes(p_results json)
RETURNS SETOF text
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp
  SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_bitmapscan = off
  SET enable_hashjoin = off SET enable_mergejoin = off AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN QUERY
  WITH input AS (
    -- A worker of the previous version sends no organization: its deliveries' are looked up
    -- (only for those; COALESCE evaluates the lookup only when the key is missing).
    SELECT x.id, COALESCE(x.organization_id, (SELECT w.organization_id FROM webhook_deliveries w WHERE w.id = x.id))
             AS organization_id,
           x.due, x.attempt_id,
           COALESCE(to_timestamp(x.attempted_ms / 1000.0), x.attempted_at) AS attempted_at,
           x.status_code, x.duration_ms, x.response_body
    FROM json_to_recordset(p_results) AS x(id text, organization_id text, due timestamptz, attempt_id text,
      attempted_ms double precision, attempted_at timestamptz, status_code integer, duration_ms integer, response_body text)
  ), upd AS (
    UPDATE webhook_deliveries d
    SET status = 'succeeded', attempt_count = d.attempt_count + 1,
        last_status_code = i.status_code, last_error = NULL, last_attempt_at = i.attempted_at,
        success_attempt_id = i.attempt_id, success_duration_ms = i.duration_ms,
        success_response_body = i.response_body,
        succeeded_at = now(), updated_at = now()
    FROM input i
    WHERE d.organization_id = i.organization_id AND d.id = i.id
      AND d.status NOT IN ('succeeded', 'dead') AND d.next_attempt_at = i.due
    RETURNING d.id, d.organization_id, d.endpoint_id
  ), log AS (
    -- The results that did not apply (the claim was lost) are logged as rows.
    INSERT INTO webhook_attempts (id, organization_id, delivery_id, attempted_at, status_code, duration_ms, error, response_body)
    SELECT i.attempt_id, d.organization_id, i.id, i.attempted_at, i.status_code, i.duration_ms, NULL, i.response_body
    FROM input i JOIN webhook_deliveries d ON d.organization_id = i.organization_id AND d.id = i.id
    WHERE i.id <> ALL(ARRAY(SELECT upd.id FROM upd))
  ), ep AS (
    UPDATE webhook_endpoints e SET consecutive_failures = 0, updated_at = now()
    FROM (SELECT DISTINCT upd.organization_id, upd.endpoint_id FROM upd) u
    WHERE e.organization_id = u.organization_id AND e.id = u.endpoint_id AND e.consecutive_failures <> 0
  )
  SELECT upd.id FROM upd;
END $$;
--> statement-breakpoint
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT t FROM tenant_keys_forced LOOP
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', r.t);
  END LOOP;
END $$;
