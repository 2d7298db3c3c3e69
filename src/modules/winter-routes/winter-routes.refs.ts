import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import type { Ctx } from '../../platform/tenancy.js';

/**
 * The dashboard's winter figures (operations.md §7): storms by `startedAt` and serviced
 * visits by `servicedAt`, from `start` (inclusive) to `end` (exclusive). Two counts, each
 * over an index led by organization_id (storms_org_started_idx, winter_visits_org_serviced_idx).
 */
export async function winterFigures(
  ctx: Ctx,
  start: Date,
  end: Date,
): Promise<{ storms: number; visitsServiced: number }> {
  const from = start.toISOString();
  const to = end.toISOString();
  const [row] = rowsOf<{ storms: number; visits: number }>(
    await ctx.tx.execute(sql`SELECT
        (SELECT count(*)::int FROM storms WHERE organization_id = ${ctx.organizationId}
          AND started_at >= ${from}::timestamptz AND started_at < ${to}::timestamptz) AS storms,
        (SELECT count(*)::int FROM winter_visits WHERE organization_id = ${ctx.organizationId}
          AND status = 'serviced'
          AND serviced_at >= ${from}::timestamptz AND serviced_at < ${to}::timestamptz) AS visits`),
  );
  return { storms: Number(row?.storms ?? 0), visitsServiced: Number(row?.visits ?? 0) };
}
