-- A queued mail may carry an HTML part beside its text (invitations, password resets):
-- mail clients show the HTML and fall back to the text. Null for the mails that have none.
ALTER TABLE "mail_jobs" ADD COLUMN "html" text;
