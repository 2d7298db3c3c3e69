import { eq, inArray } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { organizations } from '../../db/schema/index.js';
import { notFound } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';

/**
 * Merges `patch` into the organization's settings (and sets its timezone, when given),
 * under a row lock so two concurrent PATCHes of different keys both land. The settings
 * module decides what the settings are; the organizations module owns the row.
 */
export async function mergeOrganizationSettings(
  ctx: Ctx,
  patch: Record<string, unknown>,
  timezone: string | undefined,
): Promise<void> {
  const [org] = await ctx.tx
    .select({ settings: organizations.settings })
    .from(organizations)
    .where(eq(organizations.id, ctx.organizationId))
    .for('update');
  if (!org) throw notFound('Organization');
  await ctx.tx
    .update(organizations)
    .set({
      settings: { ...((org.settings ?? {}) as Record<string, unknown>), ...patch },
      ...(timezone !== undefined ? { timezone } : {}),
      updatedAt: new Date(),
    })
    .where(eq(organizations.id, ctx.organizationId));
}

/** The context's organization row (its settings and timezone), if it exists. */
export async function organizationRow(ctx: Ctx) {
  const [org] = await ctx.tx.select().from(organizations).where(eq(organizations.id, ctx.organizationId));
  return org;
}

/**
 * The rows of organizations `ids` (their settings and timezone), read in `tx` across tenants (a
 * worker's `asPlatform` transaction serving many organizations at once: the texts worker reads
 * the settings of a whole claimed batch in one statement); missing ids are left out.
 */
export async function organizationRowsOf(tx: Tx, ids: string[]) {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  return tx.select().from(organizations).where(inArray(organizations.id, unique));
}

/** The organization's IANA timezone, in which days (timesheets, date filters) are counted. */
export async function organizationTimezone(ctx: Ctx): Promise<string> {
  const [org] = await ctx.tx
    .select({ timezone: organizations.timezone })
    .from(organizations)
    .where(eq(organizations.id, ctx.organizationId));
  return org?.timezone ?? 'UTC';
}

/** The stored settings of organization `id`, read in `tx` (already inside that tenant), if it exists. */
export async function storedSettingsOf(tx: Tx, id: string): Promise<unknown> {
  const [org] = await tx
    .select({ settings: organizations.settings })
    .from(organizations)
    .where(eq(organizations.id, id));
  return org?.settings;
}
