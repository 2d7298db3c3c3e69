-- Twilio status callbacks that arrive before the worker recorded the text's MessageSid (Twilio
-- answered the create call and called back before the worker's commit): kept here by MessageSid
-- and applied when the worker records that id, in the same transaction (messages.callbacks.ts).
-- One row per MessageSid: the furthest status reported. Only kept while a text of the
-- organization is `sending` (a MessageSid no text can be is still "unknown": nothing written).
-- Row-level security and the roles' grants come from the migration runner (src/db/migrate.ts).
CREATE TABLE "message_status_reports" (
  "organization_id" text NOT NULL REFERENCES "organizations" ("id") ON DELETE CASCADE,
  "provider_id" text NOT NULL,
  "status" text NOT NULL,
  "error_code" text,
  "error_message" text,
  "received_at" timestamp with time zone DEFAULT now() NOT NULL,
  CONSTRAINT "message_status_reports_pkey" PRIMARY KEY ("organization_id", "provider_id")
);
--> statement-breakpoint
CREATE INDEX "message_status_reports_received_idx" ON "message_status_reports" ("received_at");
