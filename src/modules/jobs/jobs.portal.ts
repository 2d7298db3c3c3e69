import { and, asc, eq, gte, inArray } from 'drizzle-orm';
import { contracts, jobs } from '../../db/schema/index.js';
import { today } from '../../platform/dates.js';
import { notFound } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { invoiceRefs } from '../invoices/invoices.refs.js';
import { orgTimezone } from '../settings/settings.service.js';

/**
 * The customer a portal document names: an invoice's through the invoices module (which
 * does not import jobs); a contract's read here, since contracts import jobs (schedules).
 */
async function documentCustomer(ctx: Ctx, documentType: string, documentId: string) {
  if (documentType === 'invoice') return (await invoiceRefs(ctx, [documentId])).get(documentId);
  if (documentType !== 'contract') return undefined;
  const [row] = await ctx.tx
    .select({ customerId: contracts.customerId })
    .from(contracts)
    .where(and(eq(contracts.organizationId, ctx.organizationId), eq(contracts.id, documentId)));
  return row;
}

/** The customer's upcoming visits, as the portal shows them (no internal notes or assignees). */
export async function upcomingVisitsOf(ctx: Ctx, documentType: string, documentId: string) {
  const doc = await documentCustomer(ctx, documentType, documentId);
  if (!doc) throw notFound('Visits');
  const from = today(await orgTimezone(ctx));
  const rows = await ctx.tx
    .select()
    .from(jobs)
    .where(
      and(
        eq(jobs.organizationId, ctx.organizationId),
        eq(jobs.customerId, doc.customerId),
        inArray(jobs.status, ['scheduled', 'in_progress', 'on_hold']),
        gte(jobs.scheduledDate, from),
      ),
    )
    .orderBy(asc(jobs.scheduledDate), asc(jobs.startsAt), asc(jobs.id))
    .limit(100);
  return rows.map((r) => ({
    id: r.id,
    scheduledDate: r.scheduledDate,
    startTime: r.startTime,
    startsAt: r.startsAt,
    status: r.status,
    services: r.services,
  }));
}
