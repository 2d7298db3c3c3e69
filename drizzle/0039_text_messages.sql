-- Text messages (operations.md §10): customers gain their number in E.164 and their current SMS
-- consent; every consent change is a row of its own (kept for the life of the customer); every
-- text, outbound or inbound, is a row of `messages`, which the worker sends through Twilio.
-- Row-level security and the roles' grants come from the migration runner (src/db/migrate.ts),
-- as for every table with an organization_id.
ALTER TABLE "customers" ADD COLUMN "phone_e164" text;
--> statement-breakpoint
ALTER TABLE "customers" ADD COLUMN "sms_consent" text DEFAULT 'unknown' NOT NULL;
--> statement-breakpoint
ALTER TABLE "customers" ADD COLUMN "sms_consent_source" text;
--> statement-breakpoint
ALTER TABLE "customers" ADD COLUMN "sms_consent_at" timestamp with time zone;
--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_sms_consent_check" CHECK ("sms_consent" IN ('unknown', 'opted_in', 'opted_out'));
--> statement-breakpoint
-- An inbound text finds its customer by number.
CREATE INDEX "customers_org_phone_e164_idx" ON "customers" ("organization_id", "phone_e164") WHERE "phone_e164" IS NOT NULL;
--> statement-breakpoint
CREATE TABLE "customer_sms_consents" (
  "id" text NOT NULL,
  "organization_id" text NOT NULL REFERENCES "organizations" ("id") ON DELETE CASCADE,
  "customer_id" text NOT NULL,
  "status" text NOT NULL,
  "source" text NOT NULL,
  "evidence" text,
  -- The number the consent was given for; cleared when the customer is anonymized (the row stays).
  "phone_e164" text,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "customer_sms_consents_pkey" PRIMARY KEY ("organization_id", "id"),
  CONSTRAINT "customer_sms_consents_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id")
    REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE,
  CONSTRAINT "customer_sms_consents_status_check" CHECK ("status" IN ('opted_in', 'opted_out')),
  CONSTRAINT "customer_sms_consents_source_check" CHECK ("source" IN ('staff', 'portal', 'keyword', 'request_form'))
);
--> statement-breakpoint
CREATE INDEX "customer_sms_consents_customer_idx" ON "customer_sms_consents" ("organization_id", "customer_id", "created_at", "id");
--> statement-breakpoint
-- job_id / invoice_id / estimate_id say what a text was about, like mail_jobs.document_id: no
-- foreign key, so deleting a job keeps the conversation whole.
CREATE TABLE "messages" (
  "id" text NOT NULL,
  "organization_id" text NOT NULL REFERENCES "organizations" ("id") ON DELETE CASCADE,
  "customer_id" text,
  "direction" text NOT NULL,
  "to" text NOT NULL,
  "from" text NOT NULL,
  "body" text NOT NULL,
  "kind" text NOT NULL,
  "status" text NOT NULL,
  "segments" integer NOT NULL,
  "error_code" text,
  "error_message" text,
  "provider_id" text,
  "job_id" text,
  "invoice_id" text,
  "estimate_id" text,
  -- Automatic texts made once per subject and channel (a visit's reminder): `reminder:<jobId>`.
  "dedupe_key" text,
  "send_after" timestamp with time zone,
  "attempts" integer DEFAULT 0 NOT NULL,
  "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
  -- When the worker committed `sending` (the provider is called only after): the stuck sweep's clock
  -- and the per-organization pace (one text a second handed to the provider).
  "handed_at" timestamp with time zone,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "sent_at" timestamp with time zone,
  "delivered_at" timestamp with time zone,
  "updated_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "messages_pkey" PRIMARY KEY ("organization_id", "id"),
  CONSTRAINT "messages_customer_id_fk" FOREIGN KEY ("organization_id", "customer_id")
    REFERENCES "customers" ("organization_id", "id") ON DELETE CASCADE,
  CONSTRAINT "messages_direction_check" CHECK ("direction" IN ('outbound', 'inbound')),
  CONSTRAINT "messages_status_check" CHECK ("status" IN ('queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed', 'skipped', 'received'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "messages_org_provider_id_key" ON "messages" ("organization_id", "provider_id") WHERE "provider_id" IS NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX "messages_org_dedupe_key" ON "messages" ("organization_id", "dedupe_key") WHERE "dedupe_key" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX "messages_org_created_idx" ON "messages" ("organization_id", "created_at", "id");
--> statement-breakpoint
CREATE INDEX "messages_org_customer_created_idx" ON "messages" ("organization_id", "customer_id", "created_at", "id");
--> statement-breakpoint
CREATE INDEX "messages_due_idx" ON "messages" ("next_attempt_at") WHERE "status" = 'queued';
--> statement-breakpoint
CREATE INDEX "messages_sending_idx" ON "messages" ("handed_at") WHERE "status" = 'sending';
--> statement-breakpoint
CREATE INDEX "messages_org_handed_idx" ON "messages" ("organization_id", "handed_at") WHERE "handed_at" IS NOT NULL;
