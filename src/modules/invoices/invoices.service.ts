import { and, asc, eq, gte, inArray, lt, lte, type SQL } from 'drizzle-orm';
import { invoiceLineItems, invoices, payments } from '../../db/schema/index.js';
import { emit } from '../../delivery/outbox.js';
import { addDays, today } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents } from '../../platform/money.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { dateRange } from '../billing/date-filter.js';
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
import { type LineItemInputT, lineView, type PricedDocument, totalsColumns } from '../billing/line-items.js';
import { nextDocumentNumber } from '../billing/numbering.js';
import { type LastEmail, lastEmailOf, lastEmailsOf } from '../mail/mail.service.js';
import { recordPortalView } from '../portal/portal.service.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { postInvoiceIssued, postInvoiceVoid, postInvoiceWriteOff } from './invoices.ledger.js';
import { renderInvoicePdf } from './invoices.pdf.js';
import type { PaymentMethod } from './invoices.schemas.js';
import {
  type InvoiceStatus,
  type InvoiceTrigger,
  LIMITED_EDIT_FIELDS,
  nextInvoiceStatus,
  TRIGGER_EVENT,
} from './invoices.transitions.js';

export type InvoiceRow = typeof invoices.$inferSelect;
type LineRow = typeof invoiceLineItems.$inferSelect;
type PaymentRow = typeof payments.$inferSelect;

/** What `send` needs beyond the transaction: the public origin for links (mail goes through the queue). */
export interface SendDeps {
  baseUrl: string;
}

/** Nothing is collectable on a void or written-off invoice. */
export const balanceCents = (r: InvoiceRow) =>
  r.status === 'void' || r.status === 'written_off' ? 0 : r.totalCents - r.amountPaidCents;

const paymentView = (p: PaymentRow) => ({
  id: p.id,
  amount: fromCents(p.amountCents),
  paymentDate: p.paymentDate,
  method: p.method as PaymentMethod,
  createdAt: p.createdAt,
});

function invoiceView(r: InvoiceRow, lines: LineRow[], lastEmail: LastEmail | null) {
  return {
    id: r.id,
    invoiceNumber: r.invoiceNumber,
    customerId: r.customerId,
    propertyId: r.propertyId,
    estimateId: r.estimateId,
    status: r.status as InvoiceStatus,
    lineItems: lines.map(lineView),
    subtotal: fromCents(r.subtotalCents),
    taxRate: Number(r.taxRate),
    tax: fromCents(r.taxCents),
    total: fromCents(r.totalCents),
    amountPaid: fromCents(r.amountPaidCents),
    balance: fromCents(balanceCents(r)),
    invoiceDate: r.invoiceDate,
    dueDate: r.dueDate,
    notes: r.notes,
    sentAt: r.sentAt,
    lastEmail,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type InvoiceView = ReturnType<typeof invoiceView>;
export type InvoiceDetailView = InvoiceView & { payments: ReturnType<typeof paymentView>[] };

const invoiceLines = documentLines(invoiceLineItems, 'invoiceId');
const linesOf = (ctx: Ctx, ids: string[]): Promise<Map<string, LineRow[]>> => invoiceLines.of(ctx, ids);

export async function detailOf(ctx: Ctx, row: InvoiceRow): Promise<InvoiceDetailView> {
  const lines = (await linesOf(ctx, [row.id])).get(row.id) ?? [];
  const paid = await ctx.tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, ctx.organizationId), eq(payments.invoiceId, row.id)))
    .orderBy(asc(payments.createdAt), asc(payments.id));
  const lastEmail = await lastEmailOf(ctx, 'invoice', row.id);
  return { ...invoiceView(row, lines, lastEmail), payments: paid.map(paymentView) };
}

/** The invoice row, locked FOR UPDATE when it is about to change (payments, refunds, transitions, edits). */
export const findRow = (ctx: Ctx, id: string, lock: boolean): Promise<InvoiceRow> => invoiceRows.find(ctx, id, lock);
const invoiceRows = documentRows(invoices, 'invoice');

const upper = (s: string) => s.toUpperCase();

/** Invoice event data (decisions §5): id, number, amount due, the invoice in its REST shape. */
export const eventData = (d: InvoiceDetailView) => ({
  invoiceId: d.id,
  invoiceNumber: d.invoiceNumber,
  amountDue: d.balance,
  invoice: d,
});

/** The specific event of a trigger, plus invoice.status_changed when the status actually moved. */
export async function emitInvoiceTransition(
  ctx: Ctx,
  trigger: InvoiceTrigger,
  oldStatus: string,
  detail: InvoiceDetailView,
): Promise<void> {
  const data = { ...eventData(detail), oldStatus: upper(oldStatus), newStatus: upper(detail.status) };
  const specific = TRIGGER_EVENT[trigger];
  if (specific) await emit(ctx, specific, data);
  if (oldStatus !== detail.status) await emit(ctx, 'invoice.status_changed', data);
}

export async function getInvoice(ctx: Ctx, id: string): Promise<InvoiceDetailView> {
  return detailOf(ctx, await findRow(ctx, id, false));
}

export async function invoicePdf(ctx: Ctx, id: string): Promise<PdfFile> {
  return renderInvoicePdf(ctx, await getInvoice(ctx, id));
}

export interface InvoiceListQuery {
  status?: InvoiceStatus | undefined;
  customerId?: string | undefined;
  startDate?: string | undefined;
  dateFrom?: string | undefined;
  endDate?: string | undefined;
  dateTo?: string | undefined;
}

export async function listInvoices(ctx: Ctx, q: InvoiceListQuery, page: Page) {
  const { timezone } = await getOrgSettings(ctx);
  const range = dateRange(q, timezone);
  const where: SQL[] = [eq(invoices.organizationId, ctx.organizationId)];
  if (q.status) where.push(eq(invoices.status, q.status));
  if (q.customerId) where.push(eq(invoices.customerId, q.customerId));
  if (range.from) where.push(gte(invoices.invoiceDate, range.from));
  if (range.to) where.push(lte(invoices.invoiceDate, range.to));
  const condition = and(...where);
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, invoices, condition, page);
  const ids = rows.map((r) => r.id);
  const lines = await linesOf(ctx, ids);
  const mails = await lastEmailsOf(ctx, 'invoice', ids);
  return { rows: rows.map((r) => invoiceView(r, lines.get(r.id) ?? [], mails.get(r.id) ?? null)), ...more };
}

export interface NewInvoice {
  customerId: string;
  propertyId: string | null;
  invoiceDate: string;
  dueDate: string;
  notes: string | null;
  estimateId: string | null;
  priced: PricedDocument;
}

/** Numbers, stores and announces a validated invoice (also used by estimate conversion). */
export async function insertInvoice(ctx: Ctx, doc: NewInvoice): Promise<InvoiceDetailView> {
  const invoiceNumber = await nextDocumentNumber(ctx, 'invoice');
  const id = newId('inv');
  const [row] = await ctx.tx
    .insert(invoices)
    .values({
      id,
      organizationId: ctx.organizationId,
      invoiceNumber,
      customerId: doc.customerId,
      propertyId: doc.propertyId,
      status: 'draft',
      invoiceDate: doc.invoiceDate,
      dueDate: doc.dueDate,
      notes: doc.notes,
      ...totalsColumns(doc.priced),
      estimateId: doc.estimateId,
    })
    .returning();
  await invoiceLines.insert(ctx, id, doc.priced);
  const detail = await detailOf(ctx, row as InvoiceRow);
  await emit(ctx, 'invoice.created', eventData(detail));
  return detail;
}

export interface CreateInvoiceInput {
  customerId: string;
  propertyId?: string | undefined;
  lineItems: LineItemInputT[];
  invoiceDate?: string | undefined;
  dueDate?: string | undefined;
  notes?: string | undefined;
}

const checkDueDate = (invoiceDate: string, dueDate: string) => {
  if (dueDate < invoiceDate) throw invalidField('dueDate', `must not be before invoiceDate (${invoiceDate})`);
};

export async function createInvoice(ctx: Ctx, input: CreateInvoiceInput): Promise<InvoiceDetailView> {
  const { settings, customer, priced } = await startDocument(ctx, input);
  const invoiceDate = input.invoiceDate ?? today(settings.timezone);
  const dueDate = input.dueDate ?? addDays(invoiceDate, settings.paymentTermsDays);
  checkDueDate(invoiceDate, dueDate);
  return insertInvoice(ctx, {
    customerId: customer.id,
    propertyId: input.propertyId ?? null,
    invoiceDate,
    dueDate,
    notes: input.notes ?? null,
    estimateId: null,
    priced,
  });
}

export interface UpdateInvoiceInput {
  customerId?: string | undefined;
  propertyId?: string | null | undefined;
  lineItems?: LineItemInputT[] | undefined;
  invoiceDate?: string | undefined;
  dueDate?: string | undefined;
  notes?: string | null | undefined;
}

export async function updateInvoice(ctx: Ctx, id: string, patch: UpdateInvoiceInput): Promise<InvoiceDetailView> {
  const row = await findRow(ctx, id, true);
  if (row.status !== 'draft') refuseLockedFields('invoice', row.status, patch, LIMITED_EDIT_FIELDS);
  const parties = await editParties(ctx, row, patch, async () => (await linesOf(ctx, [id])).get(id) ?? []);
  const invoiceDate = patch.invoiceDate ?? row.invoiceDate;
  const dueDate = patch.dueDate ?? row.dueDate;
  checkDueDate(invoiceDate, dueDate);
  const settings = await getOrgSettings(ctx);

  // An overdue invoice whose dueDate moves to today or later is no longer overdue.
  let reopen: InvoiceTrigger | undefined;
  if (row.status === 'overdue' && patch.dueDate !== undefined && dueDate >= today(settings.timezone)) {
    reopen = row.amountPaidCents > 0 ? 'due_date_extended_after_payment' : 'due_date_extended';
  }

  const [updated] = await ctx.tx
    .update(invoices)
    .set({
      ...(reopen ? { status: nextInvoiceStatus('overdue', reopen) } : {}),
      ...editedColumns(row, patch, parties),
      invoiceDate,
      dueDate,
    })
    .where(and(eq(invoices.organizationId, ctx.organizationId), eq(invoices.id, id)))
    .returning();
  if (parties.priced && patch.lineItems) await invoiceLines.replace(ctx, id, parties.priced);
  const detail = await detailOf(ctx, updated as InvoiceRow);
  if (reopen) await emitInvoiceTransition(ctx, reopen, row.status, detail);
  return detail;
}

export const deleteInvoice = (ctx: Ctx, id: string): Promise<void> => invoiceRows.deleteDraft(ctx, id);

/** The ledger entry of a transition, in its transaction (operations.md §3). */
async function postTransition(ctx: Ctx, trigger: InvoiceTrigger, before: InvoiceRow, after: InvoiceRow) {
  if (trigger === 'void') await postInvoiceVoid(ctx, before);
  else if (trigger === 'write_off') await postInvoiceWriteOff(ctx, before);
  else if (before.status === 'draft' && after.status !== 'draft') await postInvoiceIssued(ctx, after);
}

/** Moves an invoice by `trigger` (409 if the table refuses), then emits. */
async function transition(
  ctx: Ctx,
  id: string,
  trigger: InvoiceTrigger,
  extra: Partial<InvoiceRow> = {},
): Promise<{ detail: InvoiceDetailView; before: InvoiceRow }> {
  const before = await findRow(ctx, id, true);
  const status = nextInvoiceStatus(before.status as InvoiceStatus, trigger);
  const [row] = await ctx.tx
    .update(invoices)
    .set({ ...extra, status, updatedAt: new Date() })
    .where(and(eq(invoices.organizationId, ctx.organizationId), eq(invoices.id, id)))
    .returning();
  await postTransition(ctx, trigger, before, row as InvoiceRow);
  const detail = await detailOf(ctx, row as InvoiceRow);
  await emitInvoiceTransition(ctx, trigger, before.status, detail);
  return { detail, before };
}

export const voidInvoice = async (ctx: Ctx, id: string) => (await transition(ctx, id, 'void')).detail;
export const writeOffInvoice = async (ctx: Ctx, id: string) => (await transition(ctx, id, 'write_off')).detail;

/**
 * Sends (or re-sends) the invoice: the transition and its events, a fresh portal
 * link, and the mail queued in the same transaction (the worker delivers it with
 * the PDF; `lastEmail` shows how that went).
 */
export async function sendInvoice(ctx: Ctx, id: string, deps: SendDeps) {
  const { detail } = await transition(ctx, id, 'send', { sentAt: new Date() });
  const doc = { type: 'invoice' as const, id, customerId: detail.customerId };
  const sent = await sendDocumentLink(ctx, doc, deps.baseUrl, ({ settings, from, url }) => ({
    subject: `Invoice ${detail.invoiceNumber} from ${from}`,
    lines: [
      `Invoice ${detail.invoiceNumber} for ${detail.total.toFixed(2)} ${settings.currency} is due on ${detail.dueDate}.`,
      `Balance due: ${detail.balance.toFixed(2)} ${settings.currency}.`,
      '',
      `View it online: ${url}`,
      '',
      `— ${from}`,
    ],
  }));
  return {
    ...detail,
    lastEmail: sent.lastEmail ?? detail.lastEmail,
    portalUrl: sent.portalUrl,
    emailedTo: sent.emailedTo,
  };
}

/** The customer's view through a link; records when the link was last opened. */
export async function viewInvoiceInPortal(ctx: Ctx, id: string) {
  const detail = await getInvoice(ctx, id);
  await recordPortalView(ctx);
  return detail;
}

/**
 * The overdue sweep for one organization: open invoices due before `todayDate`.
 * Claimed with SKIP LOCKED so a concurrent worker (or a payment holding the row)
 * is never waited on; the status re-check in the UPDATE makes a second run a no-op.
 */
export async function markInvoicesOverdue(ctx: Ctx, todayDate: string, limit: number): Promise<number> {
  const open = ['sent', 'partially_paid'];
  const due = await ctx.tx
    .select()
    .from(invoices)
    .where(
      and(
        eq(invoices.organizationId, ctx.organizationId),
        inArray(invoices.status, open),
        lt(invoices.dueDate, todayDate),
      ),
    )
    .orderBy(asc(invoices.dueDate))
    .limit(limit)
    .for('update', { skipLocked: true });
  let moved = 0;
  for (const before of due) {
    const status = nextInvoiceStatus(before.status as InvoiceStatus, 'overdue');
    const [row] = await ctx.tx
      .update(invoices)
      .set({ status, updatedAt: new Date() })
      .where(
        and(
          eq(invoices.organizationId, ctx.organizationId),
          eq(invoices.id, before.id),
          inArray(invoices.status, open),
        ),
      )
      .returning();
    if (!row) continue;
    await emitInvoiceTransition(ctx, 'overdue', before.status, await detailOf(ctx, row));
    moved++;
  }
  return moved;
}
