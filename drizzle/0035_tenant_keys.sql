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
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT t FROM tenant_keys_forced LOOP
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', r.t);
  END LOOP;
END $$;
