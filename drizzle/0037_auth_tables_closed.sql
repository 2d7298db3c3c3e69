-- Tenant transactions (role crm_app) no longer read `users`: every organization's users, names
-- and emails, were readable from any tenant. The migration runner now grants crm_app nothing on
-- `users` (src/db/migrate.ts, PLATFORM_ONLY_TABLES: with accounts, sessions and verifications),
-- and a tenant reads its member list's names and emails through this view: the users who are
-- members of the organization of the transaction (`app.organization_id`), and nothing else.
--
-- The view runs with its owner's rights (the schema owner, who may read `users`); `members` keeps
-- its forced row-level security for the owner too, and the condition names the organization as
-- well, so the view holds even for an owner that bypasses RLS (a superuser, PGlite).
-- security_barrier: a caller's own conditions (a leaky function) are applied after the view's.
CREATE VIEW "member_users" WITH (security_barrier = true) AS
  SELECT u.id, u.name, u.email
  FROM users u
  WHERE EXISTS (
    SELECT 1 FROM members m
    WHERE m.user_id = u.id AND m.organization_id = current_setting('app.organization_id', true)
  );
--> statement-breakpoint
REVOKE ALL ON "member_users" FROM PUBLIC;
--> statement-breakpoint
GRANT SELECT ON "member_users" TO crm_app;
