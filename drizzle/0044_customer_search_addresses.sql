-- Customer search finds addresses too (issue 48: `search=Oak Ave`): the indexed text of
-- customer_search becomes the customer's own text (customers.search_text: name, email, phone
-- digits), then its billing address, then the addresses of its properties, each lower-cased with
-- its parts joined by spaces and separated by U+001F (so a term never matches across two).
-- The properties part is kept in its own column: the properties module writes it when a
-- property changes, the customers module when the customer does, and neither knows the other's.
ALTER TABLE "customer_search" ADD COLUMN "property_text" text DEFAULT '' NOT NULL;
--> statement-breakpoint
-- Run by a schema owner that is not a superuser, FORCEd row-level security would hide every
-- customer and property from the backfill (no organization is set here): lifted inside this
-- migration's transaction only, and put back at its end (as 0035 does).
ALTER TABLE "customers" NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "properties" NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
UPDATE "customer_search" cs
SET "property_text" = COALESCE((
      SELECT string_agg(lower(concat_ws(' ', NULLIF(p.street, ''), NULLIF(p.city, ''), NULLIF(p.state, ''), NULLIF(p.zip, ''))), chr(31) ORDER BY p.id)
      FROM "properties" p
      WHERE p.organization_id = cs.organization_id AND p.customer_id = cs.customer_id), '')
WHERE EXISTS (SELECT 1 FROM "properties" p WHERE p.organization_id = cs.organization_id AND p.customer_id = cs.customer_id);
--> statement-breakpoint
UPDATE "customer_search" cs
SET "search_text" = c.search_text || chr(31)
      || lower(concat_ws(' ', NULLIF(c.billing_address, ''), NULLIF(c.billing_city, ''), NULLIF(c.billing_state, ''), NULLIF(c.billing_zip, '')))
      || chr(31) || cs.property_text
FROM "customers" c
WHERE c.organization_id = cs.organization_id AND c.id = cs.customer_id AND c.search_text IS NOT NULL;
--> statement-breakpoint
ALTER TABLE "customers" FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE "properties" FORCE ROW LEVEL SECURITY;
