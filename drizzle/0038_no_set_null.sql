-- Citus refuses ON DELETE SET NULL (and SET DEFAULT) on a foreign key that contains the
-- distribution column, even when only the other column is nulled (docs/scaling.md, operations.md
-- §13). The 27 composite keys of 0035 that did so become NO ACTION: the service that deletes the
-- referenced row now nulls the references first, in the same transaction, through the module that
-- owns the referencing table (a trigger cannot do it on Citus: it would run on the shard's node and
-- write another table). A referencing row still outlives its parent with a null reference.
-- Same columns, same referenced rows: the rows already there satisfy the new keys. The forced
-- tenant policy is lifted for this transaction so that the new keys check every row (as in 0035).
CREATE TEMP TABLE "no_set_null_forced" ON COMMIT DROP AS
  SELECT c.oid::regclass AS t FROM pg_class c
  WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND c.relforcerowsecurity;
--> statement-breakpoint
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT t FROM no_set_null_forced LOOP
    EXECUTE format('ALTER TABLE %s NO FORCE ROW LEVEL SECURITY', r.t);
  END LOOP;
END $$;
--> statement-breakpoint
ALTER TABLE "bills" DROP CONSTRAINT "bills_purchase_order_id_fk", ADD CONSTRAINT "bills_purchase_order_id_fk" FOREIGN KEY ("organization_id", "purchase_order_id") REFERENCES "purchase_orders" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "contracts" DROP CONSTRAINT "contracts_amends_contract_id_fk", ADD CONSTRAINT "contracts_amends_contract_id_fk" FOREIGN KEY ("organization_id", "amends_contract_id") REFERENCES "contracts" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "contracts" DROP CONSTRAINT "contracts_property_id_fk", ADD CONSTRAINT "contracts_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "contracts" DROP CONSTRAINT "contracts_template_id_fk", ADD CONSTRAINT "contracts_template_id_fk" FOREIGN KEY ("organization_id", "template_id") REFERENCES "contract_templates" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "equipment_assignments" DROP CONSTRAINT "equipment_assignments_crew_id_fk", ADD CONSTRAINT "equipment_assignments_crew_id_fk" FOREIGN KEY ("organization_id", "crew_id") REFERENCES "crews" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "equipment_assignments" DROP CONSTRAINT "equipment_assignments_job_id_fk", ADD CONSTRAINT "equipment_assignments_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "equipment_assignments" DROP CONSTRAINT "equipment_assignments_member_id_fk", ADD CONSTRAINT "equipment_assignments_member_id_fk" FOREIGN KEY ("organization_id", "member_id") REFERENCES "members" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "estimate_line_items" DROP CONSTRAINT "estimate_line_items_service_id_fk", ADD CONSTRAINT "estimate_line_items_service_id_fk" FOREIGN KEY ("organization_id", "service_id") REFERENCES "services" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_invoice_id_fk", ADD CONSTRAINT "estimates_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_job_id_fk", ADD CONSTRAINT "estimates_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "estimates" DROP CONSTRAINT "estimates_property_id_fk", ADD CONSTRAINT "estimates_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "invoice_billing_keys" DROP CONSTRAINT "invoice_billing_keys_invoice_id_fk", ADD CONSTRAINT "invoice_billing_keys_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "invoice_line_items" DROP CONSTRAINT "invoice_line_items_service_id_fk", ADD CONSTRAINT "invoice_line_items_service_id_fk" FOREIGN KEY ("organization_id", "service_id") REFERENCES "services" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "invoices" DROP CONSTRAINT "invoices_property_id_fk", ADD CONSTRAINT "invoices_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "job_schedules" DROP CONSTRAINT "job_schedules_contract_id_fk", ADD CONSTRAINT "job_schedules_contract_id_fk" FOREIGN KEY ("organization_id", "contract_id") REFERENCES "contracts" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "job_schedules" DROP CONSTRAINT "job_schedules_crew_id_fk", ADD CONSTRAINT "job_schedules_crew_id_fk" FOREIGN KEY ("organization_id", "crew_id") REFERENCES "crews" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "job_schedules" DROP CONSTRAINT "job_schedules_property_id_fk", ADD CONSTRAINT "job_schedules_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_crew_id_fk", ADD CONSTRAINT "jobs_crew_id_fk" FOREIGN KEY ("organization_id", "crew_id") REFERENCES "crews" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_invoice_id_fk", ADD CONSTRAINT "jobs_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_property_id_fk", ADD CONSTRAINT "jobs_property_id_fk" FOREIGN KEY ("organization_id", "property_id") REFERENCES "properties" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "jobs" DROP CONSTRAINT "jobs_schedule_id_fk", ADD CONSTRAINT "jobs_schedule_id_fk" FOREIGN KEY ("organization_id", "schedule_id") REFERENCES "job_schedules" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "maintenance_logs" DROP CONSTRAINT "maintenance_logs_plan_id_fk", ADD CONSTRAINT "maintenance_logs_plan_id_fk" FOREIGN KEY ("organization_id", "plan_id") REFERENCES "maintenance_plans" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "payment_intents" DROP CONSTRAINT "payment_intents_payment_id_fk", ADD CONSTRAINT "payment_intents_payment_id_fk" FOREIGN KEY ("organization_id", "payment_id") REFERENCES "payments" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "purchase_orders" DROP CONSTRAINT "purchase_orders_job_id_fk", ADD CONSTRAINT "purchase_orders_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "time_entries" DROP CONSTRAINT "time_entries_job_id_fk", ADD CONSTRAINT "time_entries_job_id_fk" FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_routes" DROP CONSTRAINT "winter_routes_crew_id_fk", ADD CONSTRAINT "winter_routes_crew_id_fk" FOREIGN KEY ("organization_id", "crew_id") REFERENCES "crews" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "winter_visits" DROP CONSTRAINT "winter_visits_invoice_id_fk", ADD CONSTRAINT "winter_visits_invoice_id_fk" FOREIGN KEY ("organization_id", "invoice_id") REFERENCES "invoices" ("organization_id", "id");
--> statement-breakpoint
DO $$ DECLARE r record; BEGIN
  FOR r IN SELECT t FROM no_set_null_forced LOOP
    EXECUTE format('ALTER TABLE %s FORCE ROW LEVEL SECURITY', r.t);
  END LOOP;
END $$;
