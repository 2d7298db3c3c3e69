import { and, eq, inArray, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { invoiceBillingKeys, invoiceLineItems, invoices } from '../../db/schema/index.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Ctx } from '../../platform/tenancy.js';

/*
 * What other modules may read about invoices: the dashboard's figures (operations.md §7),
 * each one SQL aggregate over an index led by organization_id; no invoice row reaches Node.
 */

/** Statuses whose balance is still owed (an overdue invoice is one the sweep has already marked). */
const OPEN = sql`('sent', 'partially_paid', 'overdue')`;

/** Σ total of non-draft, non-void invoices dated from..to (calendar dates, both included), in cents. */
export async function invoicedCents(ctx: Ctx, from: string, to: string): Promise<number> {
  const [row] = rowsOf<{ cents: string | number }>(
    await ctx.tx.execute(sql`SELECT coalesce(sum(total_cents), 0)::bigint AS cents FROM invoices
      WHERE organization_id = ${ctx.organizationId} AND invoice_date BETWEEN ${from} AND ${to}
        AND status NOT IN ('draft', 'void')`),
  );
  return Number(row?.cents ?? 0);
}

/** The same total per period (`day`, `week` starting Monday, `month`): period start → cents. */
export async function invoicedCentsByPeriod(
  ctx: Ctx,
  interval: 'day' | 'week' | 'month',
  from: string,
  to: string,
): Promise<Map<string, number>> {
  const rows = rowsOf<{ period: string; cents: string | number }>(
    await ctx.tx.execute(sql`SELECT to_char(date_trunc(${interval}::text, invoice_date::timestamp), 'YYYY-MM-DD') AS period,
        sum(total_cents)::bigint AS cents
      FROM invoices
      WHERE organization_id = ${ctx.organizationId} AND invoice_date BETWEEN ${from} AND ${to}
        AND status NOT IN ('draft', 'void')
      GROUP BY 1`),
  );
  return new Map(rows.map((r) => [r.period, Number(r.cents)]));
}

export interface ReceivableFigures {
  outstandingCents: number;
  overdueCents: number;
  overdueCount: number;
  aging: { current: number; days1to30: number; days31to60: number; days61to90: number; over90: number };
}

/**
 * Balances (total − paid) of sent, partially_paid and overdue invoices as of `today`:
 * overdue = due before today (whether or not the sweep has marked them), aging by days
 * past dueDate (`current` = not yet due). Amounts in cents.
 */
export async function receivableFigures(ctx: Ctx, today: string): Promise<ReceivableFigures> {
  const late = (min: number, max: number | null) =>
    max === null
      ? sql`due_date < ${today}::date - ${min - 1}::int`
      : sql`due_date BETWEEN ${today}::date - ${max}::int AND ${today}::date - ${min}::int`;
  const [row] = rowsOf<Record<string, string | number>>(
    await ctx.tx.execute(sql`SELECT
        coalesce(sum(total_cents - amount_paid_cents), 0)::bigint AS outstanding,
        coalesce(sum(total_cents - amount_paid_cents) FILTER (WHERE due_date < ${today}), 0)::bigint AS overdue,
        count(*) FILTER (WHERE due_date < ${today})::int AS overdue_count,
        coalesce(sum(total_cents - amount_paid_cents) FILTER (WHERE due_date >= ${today}), 0)::bigint AS current,
        coalesce(sum(total_cents - amount_paid_cents) FILTER (WHERE ${late(1, 30)}), 0)::bigint AS d1,
        coalesce(sum(total_cents - amount_paid_cents) FILTER (WHERE ${late(31, 60)}), 0)::bigint AS d31,
        coalesce(sum(total_cents - amount_paid_cents) FILTER (WHERE ${late(61, 90)}), 0)::bigint AS d61,
        coalesce(sum(total_cents - amount_paid_cents) FILTER (WHERE ${late(91, null)}), 0)::bigint AS d91
      FROM invoices WHERE organization_id = ${ctx.organizationId} AND status IN ${OPEN}`),
  );
  const n = (k: string) => Number(row?.[k] ?? 0);
  return {
    outstandingCents: n('outstanding'),
    overdueCents: n('overdue'),
    overdueCount: n('overdue_count'),
    aging: { current: n('current'), days1to30: n('d1'), days31to60: n('d31'), days61to90: n('d61'), over90: n('d91') },
  };
}

/** What a payment shows of the invoice it paid. */
export interface InvoiceRef {
  id: string;
  invoiceNumber: string;
  customerId: string;
}

/** The invoices among `ids` of this organization, as payments show them, by id. */
export async function invoiceRefs(ctx: Ctx, ids: string[]): Promise<Map<string, InvoiceRef>> {
  if (ids.length === 0) return new Map();
  const rows = await ctx.tx
    .select({ id: invoices.id, invoiceNumber: invoices.invoiceNumber, customerId: invoices.customerId })
    .from(invoices)
    .where(and(eq(invoices.organizationId, ctx.organizationId), inArray(invoices.id, [...new Set(ids)])));
  return new Map(rows.map((r) => [r.id, r]));
}

/** The ids of a customer's invoices, as a subquery (for `inArray`), so a list filters in one statement. */
export const invoiceIdsOfCustomer = (ctx: Ctx, customerId: string) =>
  ctx.tx
    .select({ id: invoices.id })
    .from(invoices)
    .where(and(eq(invoices.organizationId, ctx.organizationId), eq(invoices.customerId, customerId)));

/* What ON DELETE SET NULL did before drizzle/0038 (Citus refuses it): the row outlives the one it named, with a null reference. Called by the flows that delete the named rows (src/flows/delete-*.ts), before the delete, in its transaction. */
export const forgetProperty = (ctx: Ctx, propertyId: string): Promise<void> =>
  clearReferences(ctx, invoices, invoices.propertyId, [propertyId]);
export const forgetService = (ctx: Ctx, serviceId: string): Promise<void> =>
  clearReferences(ctx, invoiceLineItems, invoiceLineItems.serviceId, [serviceId]);
/** A customer's hard deletion takes its invoices (ON DELETE CASCADE): their billing keys let go first. */
export const forgetBillingKeysOf = (ctx: Ctx, invoiceIds: string[]): Promise<void> =>
  clearReferences(ctx, invoiceBillingKeys, invoiceBillingKeys.invoiceId, invoiceIds);
