-- The texts worker's pick (messages.tasks.ts, claimIn): each organization's oldest due text is
-- the first entry of this index under its organization, one probe each, instead of a read and
-- a sort of every queued text of every organization at each claim.
CREATE INDEX "messages_org_queued_idx" ON "messages" ("organization_id", "next_attempt_at", "id") WHERE "status" = 'queued';
