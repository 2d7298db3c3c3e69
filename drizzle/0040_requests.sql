-- Requests from the public (operations.md §12): the booking form on a business's website.
--
-- Booking slugs arrive without an organization, so they go through the global lookup of 0036
-- first (kind `booking_slug`, the SHA-256 of the slug) and then to the organization's settings,
-- filtered by the organization it names. The lookup's primary key (kind, hash) is what keeps a
-- slug unique across organizations: a unique index on the tenant side could not (it would have
-- to leave out organization_id, which a tenant table's unique keys may not).
ALTER TABLE "secret_lookups" DROP CONSTRAINT "secret_lookups_kind_check",
  ADD CONSTRAINT "secret_lookups_kind_check" CHECK ("kind" IN ('api_key', 'device_token', 'portal_token', 'booking_slug'));
--> statement-breakpoint
-- Services offered on the public form; none is until the owner says so.
ALTER TABLE "services" ADD COLUMN "bookable" boolean DEFAULT false NOT NULL;
--> statement-breakpoint
-- One request as the form sent it. The address and contact fields are the requester's words,
-- kept apart from customers until staff convert it. `service_ids` are the bookable services
-- picked (an array: no foreign key; conversion keeps those still in the catalog).
-- `sms_consent_evidence`: when the form's box was ticked, the time, the address it came from and
-- the form's exact wording (§10's request_form source), kept with the request for the life of
-- the row. The conversion's customer, estimate and job are composite foreign keys with NO ACTION
-- (Citus refuses SET NULL on a composite key): the estimates and jobs modules clear them when
-- they delete a draft estimate or a job; a hard-deleted customer takes its requests with it.
CREATE TABLE "requests" (
  "organization_id" text NOT NULL,
  "id" text NOT NULL,
  "status" text DEFAULT 'new' NOT NULL,
  "first_name" text NOT NULL,
  "last_name" text,
  "email" text,
  "phone" text,
  "street" text NOT NULL,
  "city" text NOT NULL,
  "state" text,
  "zip" text,
  "service_ids" text[] DEFAULT '{}'::text[] NOT NULL,
  "description" text NOT NULL,
  "preferred_dates" date[] DEFAULT '{}'::date[] NOT NULL,
  "preferred_time" text DEFAULT 'any' NOT NULL,
  "sms_consent" boolean DEFAULT false NOT NULL,
  "sms_consent_evidence" jsonb,
  "source_ip" text,
  "customer_id" text,
  "estimate_id" text,
  "job_id" text,
  "decline_reason" text,
  "converted_at" timestamp with time zone,
  "declined_at" timestamp with time zone,
  "archived_at" timestamp with time zone,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "requests_pkey" PRIMARY KEY ("organization_id", "id"),
  CONSTRAINT "requests_status_check" CHECK ("status" IN ('new', 'converted', 'declined', 'archived')),
  CONSTRAINT "requests_preferred_time_check" CHECK ("preferred_time" IN ('morning', 'afternoon', 'any'))
);
--> statement-breakpoint
ALTER TABLE "requests" ADD CONSTRAINT "requests_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
ALTER TABLE "requests" ADD CONSTRAINT "requests_customer_id_fk"
  FOREIGN KEY ("organization_id", "customer_id") REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE;
--> statement-breakpoint
ALTER TABLE "requests" ADD CONSTRAINT "requests_estimate_id_fk"
  FOREIGN KEY ("organization_id", "estimate_id") REFERENCES "estimates" ("organization_id", "id");
--> statement-breakpoint
ALTER TABLE "requests" ADD CONSTRAINT "requests_job_id_fk"
  FOREIGN KEY ("organization_id", "job_id") REFERENCES "jobs" ("organization_id", "id");
--> statement-breakpoint
CREATE INDEX "requests_org_created_idx" ON "requests" USING btree ("organization_id", "created_at", "id");
--> statement-breakpoint
CREATE INDEX "requests_org_status_created_idx" ON "requests" USING btree ("organization_id", "status", "created_at", "id");
--> statement-breakpoint
-- duplicateOf: an earlier request with the same email or phone (lower-cased / digits only).
CREATE INDEX "requests_org_email_idx" ON "requests" USING btree ("organization_id", lower("email"), "created_at");
--> statement-breakpoint
CREATE INDEX "requests_org_phone_idx" ON "requests" USING btree ("organization_id", "phone", "created_at");
--> statement-breakpoint
CREATE INDEX "requests_org_estimate_idx" ON "requests" USING btree ("organization_id", "estimate_id") WHERE "estimate_id" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "requests_org_job_idx" ON "requests" USING btree ("organization_id", "job_id") WHERE "job_id" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "requests_org_customer_idx" ON "requests" USING btree ("organization_id", "customer_id") WHERE "customer_id" IS NOT NULL;
--> statement-breakpoint
-- Each ALTCHA solution is accepted once (§12), in every process: the challenge's signature is
-- stored here when a request spends it, and a second insert of the same key finds it taken.
-- Rows outlive their challenge's expiry only until the next spend of that organization deletes them.
CREATE TABLE "altcha_spent" (
  "organization_id" text NOT NULL,
  "challenge_key" text NOT NULL,
  "expires_at" timestamp with time zone NOT NULL,
  CONSTRAINT "altcha_spent_pkey" PRIMARY KEY ("organization_id", "challenge_key")
);
--> statement-breakpoint
ALTER TABLE "altcha_spent" ADD CONSTRAINT "altcha_spent_organization_id_organizations_id_fk"
  FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "altcha_spent_org_expires_idx" ON "altcha_spent" USING btree ("organization_id", "expires_at");
