import { and, eq, inArray, lt, type SQL } from 'drizzle-orm';
import { estimateLineItems, estimates } from '../../db/schema/index.js';
import { emit } from '../../delivery/outbox.js';
import { withCalendarDates } from '../../platform/calendar-date.js';
import { addDays, today } from '../../platform/dates.js';
import { invalidField, invalidState } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents } from '../../platform/money.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import type { PdfFile } from '../billing/document-pdf.js';
import {
  documentLines,
  documentRows,
  editedColumns,
  editParties,
  refuseLockedFields,
  sendDocumentLink,
  startDocument,
} from '../billing/documents.js';
import { finish, type LineItemInputT, lineView, storedToPriced, totalsColumns } from '../billing/line-items.js';
import { nextDocumentNumber } from '../billing/numbering.js';
import { insertInvoice, type SendDeps } from '../invoices/invoices.service.js';
import { type LastEmail, lastEmailOf, lastEmailsOf } from '../mail/mail.service.js';
import { recordPortalView } from '../portal/portal.service.js';
import { getOrgSettings, orgTimezone } from '../settings/settings.service.js';
import { renderEstimatePdf } from './estimates.pdf.js';
import {
  ESTIMATE_TRIGGER_EVENTS,
  type EstimateStatus,
  type EstimateTrigger,
  LIMITED_EDIT_FIELDS,
  LIMITED_EDIT_STATES,
  nextEstimateStatus,
} from './estimates.transitions.js';

type EstimateRow = typeof estimates.$inferSelect;
type LineRow = typeof estimateLineItems.$inferSelect;

/** Default validity of an estimate (decisions §4). */
export const ESTIMATE_VALID_DAYS = 30;

function estimateView(r: EstimateRow, lines: LineRow[], lastEmail: LastEmail | null) {
  return {
    id: r.id,
    estimateNumber: r.estimateNumber,
    customerId: r.customerId,
    propertyId: r.propertyId,
    status: r.status as EstimateStatus,
    lineItems: lines.map(lineView),
    subtotal: fromCents(r.subtotalCents),
    taxRate: Number(r.taxRate),
    tax: fromCents(r.taxCents),
    total: fromCents(r.totalCents),
    estimateDate: r.estimateDate,
    expirationDate: r.expirationDate,
    notes: r.notes,
    invoiceId: r.invoiceId,
    sentAt: r.sentAt,
    viewedAt: r.viewedAt,
    approvedAt: r.approvedAt,
    declinedAt: r.declinedAt,
    lastEmail,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type EstimateView = ReturnType<typeof estimateView>;

const estimateLines = documentLines(estimateLineItems, 'estimateId');
const linesOf = (ctx: Ctx, ids: string[]): Promise<Map<string, LineRow[]>> => estimateLines.of(ctx, ids);

async function viewOf(ctx: Ctx, row: EstimateRow): Promise<EstimateView> {
  const lines = (await linesOf(ctx, [row.id])).get(row.id) ?? [];
  return estimateView(row, lines, await lastEmailOf(ctx, 'estimate', row.id));
}

const estimateRows = documentRows(estimates, 'estimate');
const findRow = (ctx: Ctx, id: string, lock: boolean): Promise<EstimateRow> => estimateRows.find(ctx, id, lock);

const eventData = (v: EstimateView) => ({ estimateId: v.id, estimateNumber: v.estimateNumber, estimate: v });

async function emitEstimateTransition(ctx: Ctx, trigger: EstimateTrigger, oldStatus: string, view: EstimateView) {
  const { specific, statusChanged } = ESTIMATE_TRIGGER_EVENTS[trigger];
  const data = { ...eventData(view), oldStatus: oldStatus.toUpperCase(), newStatus: view.status.toUpperCase() };
  if (specific) await emit(ctx, specific, data);
  if (statusChanged && oldStatus !== view.status) await emit(ctx, 'estimate.status_changed', data);
}

/** Moves an estimate by `trigger` (409 if the table refuses), stamps `extra`, emits. */
async function transition(
  ctx: Ctx,
  id: string,
  trigger: EstimateTrigger,
  extraOf: Partial<EstimateRow> | ((before: EstimateRow) => Partial<EstimateRow>) = {},
) {
  const before = await findRow(ctx, id, true);
  const extra = typeof extraOf === 'function' ? extraOf(before) : extraOf;
  const status = nextEstimateStatus(before.status as EstimateStatus, trigger);
  const [row] = await ctx.tx
    .update(estimates)
    .set({ ...extra, status, updatedAt: new Date() })
    .where(and(eq(estimates.organizationId, ctx.organizationId), eq(estimates.id, id)))
    .returning();
  const view = await viewOf(ctx, row as EstimateRow);
  await emitEstimateTransition(ctx, trigger, before.status, view);
  return { view, before };
}

export async function estimatePdf(ctx: Ctx, id: string): Promise<PdfFile> {
  return renderEstimatePdf(ctx, await getEstimate(ctx, id));
}

export async function getEstimate(ctx: Ctx, id: string): Promise<EstimateView> {
  return viewOf(ctx, await findRow(ctx, id, false));
}

export async function listEstimates(
  ctx: Ctx,
  q: { status?: EstimateStatus | undefined; customerId?: string | undefined },
  page: Page,
) {
  const where: SQL[] = [eq(estimates.organizationId, ctx.organizationId)];
  if (q.status) where.push(eq(estimates.status, q.status));
  if (q.customerId) where.push(eq(estimates.customerId, q.customerId));
  const condition = and(...where);
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, estimates, condition, page);
  const ids = rows.map((r) => r.id);
  const lines = await linesOf(ctx, ids);
  const mails = await lastEmailsOf(ctx, 'estimate', ids);
  return { rows: rows.map((r) => estimateView(r, lines.get(r.id) ?? [], mails.get(r.id) ?? null)), ...more };
}

const checkExpiration = (estimateDate: string, expirationDate: string) => {
  if (expirationDate < estimateDate) {
    throw invalidField('expirationDate', `must not be before estimateDate (${estimateDate})`);
  }
};

export interface CreateEstimateInput {
  customerId: string;
  propertyId?: string | undefined;
  lineItems: LineItemInputT[];
  estimateDate?: string | undefined;
  expirationDate?: string | undefined;
  notes?: string | undefined;
}

export async function createEstimate(ctx: Ctx, body: CreateEstimateInput): Promise<EstimateView> {
  const input = await withCalendarDates(body, ['estimateDate', 'expirationDate'], () => orgTimezone(ctx));
  const { settings, customer, priced } = await startDocument(ctx, input);
  const estimateDate = input.estimateDate ?? today(settings.timezone);
  const expirationDate = input.expirationDate ?? addDays(estimateDate, ESTIMATE_VALID_DAYS);
  checkExpiration(estimateDate, expirationDate);

  const estimateNumber = await nextDocumentNumber(ctx, 'estimate');
  const id = newId('est');
  const [row] = await ctx.tx
    .insert(estimates)
    .values({
      id,
      organizationId: ctx.organizationId,
      estimateNumber,
      customerId: customer.id,
      propertyId: input.propertyId ?? null,
      status: 'draft',
      estimateDate,
      expirationDate,
      notes: input.notes ?? null,
      ...totalsColumns(priced),
    })
    .returning();
  await estimateLines.insert(ctx, id, priced);
  const view = await viewOf(ctx, row as EstimateRow);
  await emit(ctx, 'estimate.created', eventData(view));
  return view;
}

export interface UpdateEstimateInput {
  customerId?: string | undefined;
  propertyId?: string | null | undefined;
  lineItems?: LineItemInputT[] | undefined;
  estimateDate?: string | undefined;
  expirationDate?: string | undefined;
  notes?: string | null | undefined;
}

export async function updateEstimate(ctx: Ctx, id: string, body: UpdateEstimateInput): Promise<EstimateView> {
  const patch = await withCalendarDates(body, ['estimateDate', 'expirationDate'], () => orgTimezone(ctx));
  const row = await findRow(ctx, id, true);
  const status = row.status as EstimateStatus;
  if (status !== 'draft') {
    if (!LIMITED_EDIT_STATES.includes(status)) throw invalidState(`A ${status} estimate cannot be changed`);
    refuseLockedFields('estimate', status, patch, LIMITED_EDIT_FIELDS);
  }
  const parties = await editParties(ctx, row, patch, async () => (await linesOf(ctx, [id])).get(id) ?? []);
  const estimateDate = patch.estimateDate ?? row.estimateDate;
  const expirationDate = patch.expirationDate ?? row.expirationDate;
  checkExpiration(estimateDate, expirationDate);
  const [updated] = await ctx.tx
    .update(estimates)
    .set({
      ...editedColumns(row, patch, parties),
      estimateDate,
      expirationDate,
    })
    .where(and(eq(estimates.organizationId, ctx.organizationId), eq(estimates.id, id)))
    .returning();
  if (parties.priced && patch.lineItems) await estimateLines.replace(ctx, id, parties.priced);
  return viewOf(ctx, updated as EstimateRow);
}

export const deleteEstimate = (ctx: Ctx, id: string): Promise<void> => estimateRows.deleteDraft(ctx, id);

export async function sendEstimate(ctx: Ctx, id: string, deps: SendDeps) {
  const { view } = await transition(ctx, id, 'send', (before) => ({
    // sentAt is the first send (a resend keeps it): the dashboard counts estimates first sent in a range.
    sentAt: before.sentAt ?? new Date(),
  }));
  const doc = { type: 'estimate' as const, id, customerId: view.customerId };
  const sent = await sendDocumentLink(ctx, doc, deps.baseUrl, ({ settings, from, url }) => ({
    subject: `Estimate ${view.estimateNumber} from ${from}`,
    lines: [
      `Estimate ${view.estimateNumber} for ${view.total.toFixed(2)} ${settings.currency} is valid until ${view.expirationDate}.`,
      '',
      `View, approve or decline it online: ${url}`,
      '',
      `— ${from}`,
    ],
  }));
  return { ...view, lastEmail: sent.lastEmail ?? view.lastEmail, portalUrl: sent.portalUrl, emailedTo: sent.emailedTo };
}

export const approveEstimate = async (ctx: Ctx, id: string) =>
  (await transition(ctx, id, 'approve', { approvedAt: new Date() })).view;
export const declineEstimate = async (ctx: Ctx, id: string) =>
  (await transition(ctx, id, 'decline', { declinedAt: new Date() })).view;

/**
 * Converts the estimate into a draft invoice with the same lines and the same
 * tax rate, so the invoice totals exactly what the customer approved.
 */
export async function convertEstimate(ctx: Ctx, id: string) {
  const row = await findRow(ctx, id, true);
  nextEstimateStatus(row.status as EstimateStatus, 'convert');
  const settings = await getOrgSettings(ctx);
  const lines = (await linesOf(ctx, [id])).get(id) ?? [];
  const invoiceDate = today(settings.timezone);
  const invoice = await insertInvoice(ctx, {
    customerId: row.customerId,
    propertyId: row.propertyId,
    invoiceDate,
    dueDate: addDays(invoiceDate, settings.paymentTermsDays),
    notes: row.notes,
    estimateId: row.id,
    priced: finish(lines.map(storedToPriced), Number(row.taxRate)),
  });
  const { view } = await transition(ctx, id, 'convert', { invoiceId: invoice.id });
  return { estimate: view, invoice };
}

/** The customer opens the link: records it, and the first view of a sent estimate makes it viewed (no event). */
export async function viewEstimateInPortal(ctx: Ctx, id: string): Promise<EstimateView> {
  await recordPortalView(ctx);
  const row = await findRow(ctx, id, true);
  if (row.status === 'sent') return (await transition(ctx, id, 'view', { viewedAt: new Date() })).view;
  return viewOf(ctx, row);
}

/**
 * The customer approves or declines through the link. Past its expirationDate an
 * estimate cannot be accepted even if the expiry sweep has not run yet.
 */
export async function respondInPortal(ctx: Ctx, id: string, trigger: 'approve' | 'decline'): Promise<EstimateView> {
  const row = await findRow(ctx, id, true);
  const { timezone } = await getOrgSettings(ctx);
  if (LIMITED_EDIT_STATES.includes(row.status as EstimateStatus) && row.expirationDate < today(timezone)) {
    throw invalidState(`This estimate expired on ${row.expirationDate}`);
  }
  return trigger === 'approve' ? approveEstimate(ctx, id) : declineEstimate(ctx, id);
}

/** The expiry sweep for one organization: sent/viewed estimates past expirationDate. No event (spec 3.2). */
export async function expireEstimates(ctx: Ctx, todayDate: string, limit: number): Promise<number> {
  const open: EstimateStatus[] = ['sent', 'viewed'];
  const due = await ctx.tx
    .select({ id: estimates.id, status: estimates.status })
    .from(estimates)
    .where(
      and(
        eq(estimates.organizationId, ctx.organizationId),
        inArray(estimates.status, open),
        lt(estimates.expirationDate, todayDate),
      ),
    )
    .limit(limit)
    .for('update', { skipLocked: true });
  let moved = 0;
  for (const row of due) {
    const status = nextEstimateStatus(row.status as EstimateStatus, 'expire');
    const done = await ctx.tx
      .update(estimates)
      .set({ status, updatedAt: new Date() })
      .where(
        and(
          eq(estimates.organizationId, ctx.organizationId),
          eq(estimates.id, row.id),
          inArray(estimates.status, open),
        ),
      )
      .returning({ id: estimates.id });
    moved += done.length;
  }
  return moved;
}
