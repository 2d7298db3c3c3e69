import { and, asc, eq, gte, inArray } from 'drizzle-orm';
import { contracts, invoices, jobs } from '../../db/schema/index.js';
import { today } from '../../platform/dates.js';
import { notFound } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { orgTimezone } from '../settings/settings.service.js';

/** The customer's upcoming visits, as the portal shows them (no internal notes or assignees). */
export async function upcomingVisitsOf(ctx: Ctx, documentType: string, documentId: string) {
  const table = documentType === 'contract' ? contracts : documentType === 'invoice' ? invoices : null;
  if (!table) throw notFound('Visits');
  const [doc] = await ctx.tx
    .select({ customerId: table.customerId })
    .from(table)
    .where(and(eq(table.organizationId, ctx.organizationId), eq(table.id, documentId)));
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
