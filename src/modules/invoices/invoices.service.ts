import { and, asc, eq, gte, inArray, lt, lte, type SQL } from 'drizzle-orm';
import { customers, invoiceLineItems, invoices, payments, portalTokens } from '../../db/schema/index.js';
import { addDays, today } from '../../platform/dates.js';
import { invalidField, invalidState, notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Mailer } from '../../platform/mail.js';
import { fromCents } from '../../platform/money.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { emit } from '../../webhooks/outbox.js';
import { dateRange } from '../billing/date-filter.js';
import { mailDocumentLink } from '../billing/document-mail.js';
import type { PdfFile } from '../billing/document-pdf.js';
import {
  finish,
  type LineItemInputT,
  lineRows,
  lineView,
  type PricedDocument,
  priceLines,
  storedToPriced,
  taxRateFor,
  totalsColumns,
} from '../billing/line-items.js';
import { nextDocumentNumber } from '../billing/numbering.js';
import { type CustomerRow, requireCustomer, requireProperty } from '../customers/customers.refs.js';
import { createPortalLink } from '../portal/portal.service.js';
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

/** What `send` needs beyond the transaction: the mailer and the public origin for links. */
export interface SendDeps {
  mailer: Mailer;
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

function invoiceView(r: InvoiceRow, lines: LineRow[]) {
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
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}
export type InvoiceView = ReturnType<typeof invoiceView>;
export type InvoiceDetailView = InvoiceView & { payments: ReturnType<typeof paymentView>[] };

async function linesOf(ctx: Ctx, ids: string[]): Promise<Map<string, LineRow[]>> {
  const byInvoice = new Map<string, LineRow[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return byInvoice;
  const rows = await ctx.tx
    .select()
    .from(invoiceLineItems)
    .where(and(eq(invoiceLineItems.organizationId, ctx.organizationId), inArray(invoiceLineItems.invoiceId, ids)))
    .orderBy(asc(invoiceLineItems.invoiceId), asc(invoiceLineItems.position));
  for (const row of rows) byInvoice.get(row.invoiceId)?.push(row);
  return byInvoice;
}

export async function detailOf(ctx: Ctx, row: InvoiceRow): Promise<InvoiceDetailView> {
  const lines = (await linesOf(ctx, [row.id])).get(row.id) ?? [];
  const paid = await ctx.tx
    .select()
    .from(payments)
    .where(and(eq(payments.organizationId, ctx.organizationId), eq(payments.invoiceId, row.id)))
    .orderBy(asc(payments.createdAt), asc(payments.id));
  return { ...invoiceView(row, lines), payments: paid.map(paymentView) };
}

/** The invoice row, locked FOR UPDATE when it is about to change (payments, refunds, transitions, edits). */
export async function findRow(ctx: Ctx, id: string, lock: boolean): Promise<InvoiceRow> {
  const query = ctx.tx
    .select()
    .from(invoices)
    .where(and(eq(invoices.organizationId, ctx.organizationId), eq(invoices.id, id)));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Invoice');
  return row;
}

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
  const lines = await linesOf(
    ctx,
    rows.map((r) => r.id),
  );
  return { rows: rows.map((r) => invoiceView(r, lines.get(r.id) ?? [])), ...more };
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
  await insertLines(ctx, id, doc.priced);
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
  const settings = await getOrgSettings(ctx);
  const customer = await requireCustomer(ctx, input.customerId);
  if (input.propertyId) await requireProperty(ctx, customer.id, input.propertyId);
  const invoiceDate = input.invoiceDate ?? today(settings.timezone);
  const dueDate = input.dueDate ?? addDays(invoiceDate, settings.paymentTermsDays);
  checkDueDate(invoiceDate, dueDate);
  const priced = await priceLines(ctx, input.lineItems, taxRateFor(customer, settings.taxRate));
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
  const given = Object.keys(patch).filter((k) => patch[k as keyof UpdateInvoiceInput] !== undefined);
  if (row.status !== 'draft') {
    const refused = given.filter((k) => !(LIMITED_EDIT_FIELDS as readonly string[]).includes(k));
    if (refused.length > 0) {
      throw invalidState(
        `A ${row.status.replace('_', ' ')} invoice accepts changes to ${LIMITED_EDIT_FIELDS.join(' and ')} only (not ${refused.join(', ')})`,
      );
    }
  }
  const customerId = patch.customerId ?? row.customerId;
  const customerChanged = customerId !== row.customerId;
  let customer: CustomerRow | undefined;
  if (customerChanged || patch.lineItems) customer = await requireCustomer(ctx, customerId);
  let propertyId = row.propertyId;
  if (patch.propertyId !== undefined) propertyId = patch.propertyId;
  if (propertyId && (patch.propertyId !== undefined || customerChanged)) {
    await requireProperty(ctx, customerId, propertyId);
  }
  const invoiceDate = patch.invoiceDate ?? row.invoiceDate;
  const dueDate = patch.dueDate ?? row.dueDate;
  checkDueDate(invoiceDate, dueDate);

  // A new customer may change the tax rate (exemption): the stored lines are re-totalled at the new rate.
  let priced: PricedDocument | undefined;
  const settings = await getOrgSettings(ctx);
  if (customer) {
    const { taxRate } = settings;
    const rate = taxRateFor(customer, taxRate);
    if (patch.lineItems) priced = await priceLines(ctx, patch.lineItems, rate);
    else priced = finish(((await linesOf(ctx, [id])).get(id) ?? []).map(storedToPriced), rate);
  }

  // An overdue invoice whose dueDate moves to today or later is no longer overdue.
  let reopen: InvoiceTrigger | undefined;
  if (row.status === 'overdue' && patch.dueDate !== undefined && dueDate >= today(settings.timezone)) {
    reopen = row.amountPaidCents > 0 ? 'due_date_extended_after_payment' : 'due_date_extended';
  }

  const [updated] = await ctx.tx
    .update(invoices)
    .set({
      ...(reopen ? { status: nextInvoiceStatus('overdue', reopen) } : {}),
      customerId,
      propertyId,
      invoiceDate,
      dueDate,
      notes: patch.notes === undefined ? row.notes : patch.notes,
      ...(priced ? totalsColumns(priced) : {}),
      updatedAt: new Date(),
    })
    .where(and(eq(invoices.organizationId, ctx.organizationId), eq(invoices.id, id)))
    .returning();
  if (priced && patch.lineItems) {
    await ctx.tx
      .delete(invoiceLineItems)
      .where(and(eq(invoiceLineItems.organizationId, ctx.organizationId), eq(invoiceLineItems.invoiceId, id)));
    await insertLines(ctx, id, priced);
  }
  const detail = await detailOf(ctx, updated as InvoiceRow);
  if (reopen) await emitInvoiceTransition(ctx, reopen, row.status, detail);
  return detail;
}

export async function deleteInvoice(ctx: Ctx, id: string): Promise<void> {
  const row = await findRow(ctx, id, true);
  if (row.status !== 'draft') throw invalidState(`Only a draft invoice can be deleted; this one is ${row.status}`);
  await ctx.tx.delete(invoices).where(and(eq(invoices.organizationId, ctx.organizationId), eq(invoices.id, id)));
}

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
 * Sends (or re-sends) the invoice: a fresh portal link, the transition, its events,
 * and last the mail, so a refused mail rolls everything back.
 */
export async function sendInvoice(ctx: Ctx, id: string, deps: SendDeps) {
  const { detail } = await transition(ctx, id, 'send', { sentAt: new Date() });
  const [customer] = await ctx.tx
    .select()
    .from(customers)
    .where(and(eq(customers.organizationId, ctx.organizationId), eq(customers.id, detail.customerId)));
  if (!customer) throw notFound('Customer');
  const settings = await getOrgSettings(ctx);
  const link = await createPortalLink(ctx, deps.baseUrl, 'invoice', id);
  const from = settings.companyName ?? settings.name;
  const pdf = await renderInvoicePdf(ctx, detail);
  const emailedTo = await mailDocumentLink(deps.mailer, customer, {
    attachments: [{ filename: pdf.filename, content: pdf.content, contentType: 'application/pdf' }],
    subject: `Invoice ${detail.invoiceNumber} from ${from}`,
    lines: [
      `Invoice ${detail.invoiceNumber} for ${detail.total.toFixed(2)} ${settings.currency} is due on ${detail.dueDate}.`,
      `Balance due: ${detail.balance.toFixed(2)} ${settings.currency}.`,
      '',
      `View it online: ${link.url}`,
      '',
      `— ${from}`,
    ],
  });
  return { ...detail, portalUrl: link.url, emailedTo };
}

/** The customer's view through a link; records when the link was last opened. */
export async function viewInvoiceInPortal(ctx: Ctx, id: string) {
  const detail = await getInvoice(ctx, id);
  await ctx.tx
    .update(portalTokens)
    .set({ lastViewedAt: new Date() })
    .where(and(eq(portalTokens.organizationId, ctx.organizationId), eq(portalTokens.id, ctx.actor.id)));
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

async function insertLines(ctx: Ctx, invoiceId: string, priced: PricedDocument) {
  await ctx.tx
    .insert(invoiceLineItems)
    .values(
      lineRows(priced.lines).map((l) => ({ ...l, id: newId('lin'), organizationId: ctx.organizationId, invoiceId })),
    );
}
