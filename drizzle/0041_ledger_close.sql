-- Period close and account names for other systems (operations.md §11).
--
-- ledger_closes: one row per organization holding the day its books are closed through. Every
-- posting takes this row FOR SHARE (ledger_close_lock below) and a close or reopen takes it FOR
-- UPDATE, so a close racing a posting is serialized: either the posting commits first and the
-- close comes after it, or the posting waits, re-reads the new date and is refused.
CREATE TABLE "ledger_closes" (
  "id" text NOT NULL,
  "organization_id" text NOT NULL,
  "closed_through" date,
  "updated_by" text,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "ledger_closes_pkey" PRIMARY KEY ("organization_id", "id"),
  CONSTRAINT "ledger_closes_org_unique" UNIQUE ("organization_id")
);
--> statement-breakpoint
ALTER TABLE "ledger_closes" ADD CONSTRAINT "ledger_closes_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- The name and code an account carries in the accountant's system (QuickBooks, Xero); no row =
-- ours. The chart itself is fixed in code, so the account is its code.
CREATE TABLE "ledger_account_mappings" (
  "id" text NOT NULL,
  "organization_id" text NOT NULL,
  "account_code" text NOT NULL,
  "external_name" text,
  "external_code" text,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "ledger_account_mappings_pkey" PRIMARY KEY ("organization_id", "id"),
  CONSTRAINT "ledger_account_mappings_org_code_unique" UNIQUE ("organization_id", "account_code")
);
--> statement-breakpoint
ALTER TABLE "ledger_account_mappings" ADD CONSTRAINT "ledger_account_mappings_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- The organization's close row, locked FOR SHARE until the caller's transaction ends, and its date.
-- A missing row is created first (an organization that never closed), so there is always a row to
-- lock: without one, a posting and a first close would not see each other. Runs with the caller's
-- rights: row-level security keeps a tenant to its own row.
CREATE FUNCTION ledger_close_lock(p_org text) RETURNS date
LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
  v_closed date;
BEGIN
  SELECT closed_through INTO v_closed FROM ledger_closes WHERE organization_id = p_org FOR SHARE;
  IF NOT FOUND THEN
    INSERT INTO ledger_closes (id, organization_id) VALUES ('lcl_' || md5(p_org), p_org)
      ON CONFLICT (organization_id) DO NOTHING;
    SELECT closed_through INTO v_closed FROM ledger_closes WHERE organization_id = p_org FOR SHARE;
  END IF;
  RETURN v_closed;
END $$;
--> statement-breakpoint
-- The backstop under the service's own check (which answers 409 PERIOD_CLOSED naming the field):
-- no code path, present or future, can insert an entry dated in a closed period.
CREATE FUNCTION ledger_entries_open_period() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
  v_closed date := ledger_close_lock(NEW.organization_id);
BEGIN
  IF v_closed IS NOT NULL AND NEW.entry_date <= v_closed THEN
    RAISE EXCEPTION 'ledger entry dated % lies in the period closed through %', NEW.entry_date, v_closed
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_entries_open_period';
  END IF;
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "ledger_entries_open_period" BEFORE INSERT OR UPDATE OF "entry_date" ON "ledger_entries"
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_open_period();
