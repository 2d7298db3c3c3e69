import { eq } from 'drizzle-orm';
import { organizations } from '../../db/schema/index.js';
import type { Ctx } from '../../platform/tenancy.js';

/** The organization's IANA timezone, in which days (timesheets, date filters) are counted. */
export async function organizationTimezone(ctx: Ctx): Promise<string> {
  const [org] = await ctx.tx
    .select({ timezone: organizations.timezone })
    .from(organizations)
    .where(eq(organizations.id, ctx.organizationId));
  return org?.timezone ?? 'UTC';
}
