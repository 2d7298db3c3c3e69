import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { winterRoutes, winterVisits } from '../../db/schema/index.js';
import { clearReferences } from '../../platform/owned-rows.js';
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

/* What ON DELETE SET NULL did before drizzle/0038 (Citus refuses it): the row outlives the one it named, with a null reference. Called by the flows that delete the named rows (src/flows/delete-*.ts), before the delete, in its transaction. */
export const forgetCrew = (ctx: Ctx, crewId: string): Promise<void> =>
  clearReferences(ctx, winterRoutes, winterRoutes.crewId, [crewId]);
export const forgetInvoices = (ctx: Ctx, invoiceIds: string[]): Promise<void> =>
  clearReferences(ctx, winterVisits, winterVisits.invoiceId, invoiceIds);
