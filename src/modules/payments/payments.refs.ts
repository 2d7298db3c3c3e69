import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * What other modules may read about payments: the dashboard's money collected
 * (operations.md §7) — payments dated in a range less refunds made in it — as SQL
 * aggregates over (organization_id, payment_date) and (organization_id, created_at).
 */

/** Cents collected from..to (calendar dates in `timezone`, both included). */
export async function collectedCents(ctx: Ctx, from: string, to: string, timezone: string): Promise<number> {
  const [row] = rowsOf<{ paid: string | number; refunded: string | number }>(
    await ctx.tx.execute(sql`SELECT
        (SELECT coalesce(sum(amount_cents), 0) FROM payments
          WHERE organization_id = ${ctx.organizationId} AND payment_date BETWEEN ${from} AND ${to})::bigint AS paid,
        (SELECT coalesce(sum(amount_cents), 0) FROM payment_refunds
          WHERE organization_id = ${ctx.organizationId}
            AND created_at >= (${from}::date)::timestamp AT TIME ZONE ${timezone}::text
            AND created_at < (${to}::date + 1)::timestamp AT TIME ZONE ${timezone}::text)::bigint AS refunded`),
  );
  return Number(row?.paid ?? 0) - Number(row?.refunded ?? 0);
}

/** The same per period (`day`, `week` starting Monday, `month`): period start → cents (refunds by their local day). */
export async function collectedCentsByPeriod(
  ctx: Ctx,
  interval: 'day' | 'week' | 'month',
  from: string,
  to: string,
  timezone: string,
): Promise<Map<string, number>> {
  const rows = rowsOf<{ period: string; cents: string | number }>(
    await ctx.tx.execute(sql`SELECT period, sum(cents)::bigint AS cents FROM (
        SELECT to_char(date_trunc(${interval}::text, payment_date::timestamp), 'YYYY-MM-DD') AS period, amount_cents AS cents
        FROM payments
        WHERE organization_id = ${ctx.organizationId} AND payment_date BETWEEN ${from} AND ${to}
        UNION ALL
        SELECT to_char(date_trunc(${interval}::text, (created_at AT TIME ZONE ${timezone}::text)::date::timestamp), 'YYYY-MM-DD'), -amount_cents
        FROM payment_refunds
        WHERE organization_id = ${ctx.organizationId}
          AND created_at >= (${from}::date)::timestamp AT TIME ZONE ${timezone}::text
          AND created_at < (${to}::date + 1)::timestamp AT TIME ZONE ${timezone}::text
      ) m GROUP BY period`),
  );
  return new Map(rows.map((r) => [r.period, Number(r.cents)]));
}
