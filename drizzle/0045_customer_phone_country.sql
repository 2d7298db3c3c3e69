-- Which country a customer's phone_e164 was read with (operations.md §10). NULL with a phone means
-- "to be read again": every existing customer now (those made before 0039 have a phone and no
-- phone_e164; the others were read with whatever country their organization had then), and every
-- customer of an organization whose country changes (the settings change marks them). The worker
-- task `customers.phones` and `npm run admin -- backfill-phones` read them in batches
-- (src/modules/customers/customers.phones.ts). No data is moved here: nothing to lift FORCE for.
ALTER TABLE "customers" ADD COLUMN "phone_country" text;
--> statement-breakpoint
CREATE INDEX "customers_phone_unread_idx" ON "customers" ("organization_id", "id") WHERE "phone" IS NOT NULL AND "phone_country" IS NULL;
