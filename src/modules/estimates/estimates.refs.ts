import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import type { Ctx } from '../../platform/tenancy.js';

/**
 * The dashboard's estimates (operations.md §7): those first sent from `start` (inclusive)
 * to `end` (exclusive), and how many of them are now approved or converted. One aggregate
 * over (organization_id, sent_at); sentAt keeps the first send.
 */
export async function estimateFigures(ctx: Ctx, start: Date, end: Date): Promise<{ sent: number; approved: number }> {
  const [row] = rowsOf<{ sent: number; approved: number }>(
    await ctx.tx.execute(sql`SELECT count(*)::int AS sent,
        count(*) FILTER (WHERE status IN ('approved', 'converted'))::int AS approved
      FROM estimates WHERE organization_id = ${ctx.organizationId} AND sent_at IS NOT NULL
        AND sent_at >= ${start.toISOString()}::timestamptz AND sent_at < ${end.toISOString()}::timestamptz`),
  );
  return { sent: Number(row?.sent ?? 0), approved: Number(row?.approved ?? 0) };
}
