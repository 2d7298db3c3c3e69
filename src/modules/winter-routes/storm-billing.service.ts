import { and, asc, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { winterRoutes, winterRuns, winterVisits } from '../../db/schema/index.js';
import { AppError } from '../../platform/errors.js';
import { fromCents, lineAmountCents } from '../../platform/money.js';
import { take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { MAX_LINE_ITEMS } from '../billing/line-items.js';
import type { PropertyRow } from '../customers/customers.refs.js';
import { propertyView } from '../properties/properties.service.js';
import { loadStorm, type StormRow, type VisitRow } from './storms.service.js';
import { chunked, valuesList } from './winter-routes.service.js';
import { visitMachine, visitState } from './winter-routes.states.js';

const SERVICE_NAMES: Record<string, string> = {
  plow: 'Plowing',
  salt: 'Salting',
  shovel: 'Shoveling',
  deice: 'De-icing',
};

/** What a serviced visit bills: price × pushes per push, price once per event. */
const quantityOf = (v: VisitRow) => (v.billingMode === 'per_push' ? (v.pushes ?? 1) : 1);

/**
 * Billing a storm (src/flows/bill-storm.ts), first step: the storm, locked, and its serviced,
 * unbilled visits (seasonal stops excluded), read FOR UPDATE so concurrent calls never bill a
 * visit twice.
 */
export async function billableStormVisits(ctx: Ctx, stormId: string): Promise<{ storm: StormRow; visits: VisitRow[] }> {
  const storm = await loadStorm(ctx, stormId, true);
  const rows = await ctx.tx
    .select({ visit: winterVisits, routeName: winterRoutes.name })
    .from(winterVisits)
    .innerJoin(winterRuns, eq(winterRuns.id, winterVisits.runId))
    .innerJoin(winterRoutes, eq(winterRoutes.id, winterRuns.routeId))
    .where(
      and(
        eq(winterVisits.organizationId, ctx.organizationId),
        eq(winterRuns.stormId, stormId),
        eq(winterVisits.status, 'serviced'),
        isNull(winterVisits.invoiceId),
        ne(winterVisits.billingMode, 'seasonal'),
      ),
    )
    .orderBy(asc(winterVisits.customerId), asc(winterRoutes.name), asc(winterVisits.sequence), asc(winterVisits.id))
    .for('update', { of: winterVisits });
  return { storm, visits: rows.map((r) => r.visit) };
}

/** One draft invoice of a storm's bill: its visits and what the invoice says of them. */
export interface StormInvoiceDraft {
  visits: VisitRow[];
  invoice: {
    customerId: string;
    propertyId: string | undefined;
    notes: string;
    lineItems: Array<{ description: string; quantity: number; unitPrice: number }>;
  };
}

/**
 * The storm's visits as draft invoices: one per customer, one line per visit (services,
 * property address, storm name), at most MAX_LINE_ITEMS lines each (a customer with more
 * visits in one storm gets several). `live` holds the properties of customers that still
 * exist: a deleted customer can be sent nothing, so its visits stay unbilled (and show in
 * the report). Every visit is checked against the visit machine before any invoice is made.
 */
export function stormInvoiceDrafts(
  storm: StormRow,
  visits: VisitRow[],
  live: Map<string, PropertyRow>,
): StormInvoiceDraft[] {
  const byCustomer = new Map<string, VisitRow[]>();
  for (const visit of visits) {
    if (!live.has(visit.propertyId)) continue;
    take(visitMachine, visitState(visit), 'bill');
    const list = byCustomer.get(visit.customerId) ?? [];
    list.push(visit);
    byCustomer.set(visit.customerId, list);
  }
  const drafts: StormInvoiceDraft[] = [];
  for (const [customerId, list] of byCustomer) {
    for (let start = 0; start < list.length; start += MAX_LINE_ITEMS) {
      const chunk = list.slice(start, start + MAX_LINE_ITEMS);
      const propertyIds = new Set(chunk.map((v) => v.propertyId));
      drafts.push({
        visits: chunk,
        invoice: {
          customerId,
          propertyId: propertyIds.size === 1 ? chunk[0]?.propertyId : undefined,
          notes: `Snow services, storm ${storm.name}`,
          lineItems: chunk.map((v) => {
            const property = live.get(v.propertyId);
            const where = property ? propertyView(property).address : v.propertyId;
            const what = v.services.map((s) => SERVICE_NAMES[s] ?? s).join(', ');
            const unit =
              v.billingMode === 'per_push' ? `, ${quantityOf(v)} push${quantityOf(v) === 1 ? '' : 'es'}` : '';
            return {
              description: `${what}${unit} — ${where} — storm ${storm.name}`,
              quantity: quantityOf(v),
              unitPrice: fromCents(v.priceCents),
            };
          }),
        },
      });
    }
  }
  return drafts;
}

/**
 * Billing a storm, last step: every visit billed by the call records its invoice, in one
 * statement per chunk (not one per visit), and only while still unbilled.
 */
export async function markVisitsBilled(ctx: Ctx, billed: Array<{ visit: VisitRow; invoiceId: string }>) {
  for (const chunk of chunked(billed)) {
    const result = await ctx.tx.execute(sql`
      UPDATE winter_visits w SET invoice_id = v.invoice_id, billed_cents = v.billed_cents::bigint, updated_at = now()
      FROM (VALUES ${valuesList(
        chunk.map(({ visit, invoiceId }) => [
          visit.id,
          invoiceId,
          lineAmountCents(quantityOf(visit), visit.priceCents),
        ]),
      )}) AS v(id, invoice_id, billed_cents)
      WHERE w.organization_id = ${ctx.organizationId} AND w.id = v.id AND w.invoice_id IS NULL
      RETURNING w.id`);
    const updated = new Set(rowsOf<{ id: string }>(result).map((r) => r.id));
    // Cannot happen while the rows are locked; if it did, the whole call rolls back.
    const lost = chunk.find(({ visit }) => !updated.has(visit.id));
    if (lost) throw new AppError('CONFLICT', `Visit ${lost.visit.id} was billed by another call`);
  }
}

/** Per route of the storm: visit counts, pushes, salt, first and last service, amount billed. */
export async function stormReport(ctx: Ctx, stormId: string) {
  await loadStorm(ctx, stormId);
  const runs = await ctx.tx
    .select({ id: winterRuns.id, routeId: winterRuns.routeId })
    .from(winterRuns)
    .innerJoin(winterRoutes, eq(winterRoutes.id, winterRuns.routeId))
    .where(and(eq(winterRuns.organizationId, ctx.organizationId), eq(winterRuns.stormId, stormId)))
    .orderBy(asc(winterRoutes.name), asc(winterRuns.routeId));
  const visits =
    runs.length === 0
      ? []
      : await ctx.tx
          .select()
          .from(winterVisits)
          .where(
            and(
              eq(winterVisits.organizationId, ctx.organizationId),
              inArray(
                winterVisits.runId,
                runs.map((r) => r.id),
              ),
            ),
          );
  const byRun = new Map<string, VisitRow[]>(runs.map((r) => [r.id, []]));
  for (const v of visits) byRun.get(v.runId)?.push(v);
  return {
    stormId,
    routes: runs.map((run) => {
      const list = byRun.get(run.id) ?? [];
      const serviced = list.filter((v) => v.status === 'serviced');
      const times = serviced.map((v) => v.servicedAt?.getTime()).filter((t): t is number => t !== undefined);
      const salt = list.reduce((sum, v) => sum + (v.saltLbs ?? 0), 0);
      return {
        routeId: run.routeId,
        serviced: serviced.length,
        skipped: list.filter((v) => v.status === 'skipped').length,
        pending: list.filter((v) => v.status === 'pending').length,
        pushes: serviced.reduce((sum, v) => sum + (v.pushes ?? 0), 0),
        saltLbs: Math.round(salt * 1000) / 1000,
        firstServicedAt: times.length ? new Date(Math.min(...times)) : null,
        lastServicedAt: times.length ? new Date(Math.max(...times)) : null,
        billed: fromCents(list.reduce((sum, v) => sum + (v.invoiceId ? (v.billedCents ?? 0) : 0), 0)),
      };
    }),
  };
}
