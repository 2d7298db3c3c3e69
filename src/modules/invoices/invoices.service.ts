import { and, asc, eq, gt, gte, lt, lte } from 'drizzle-orm';
import { invoiceBillingKeys, invoiceLineItems, invoices, payments } from '../../db/schema/index.js';
import { addDays, today } from '../../platform/dates.js';
import { invalidField } from '../../platform/errors.js';
import { emitMany } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { fromCents } from '../../platform/money.js';
import { clearReferences } from '../../platform/owned-rows.js';
import type { Page } from '../../platform/pagination.js';
import type { PdfSource } from '../../platform/pdf.js';
import { canTake, take } from '../../platform/state-machine.js';
import type { Ctx } from '../../platform/tenancy.js';
import { dateRange } from '../billing/date-filter.js';
import {
  type DocumentInput,
  type DocumentPatch,
  documentFilters,
  documentLines,
  documentPage,
  documentRows,
  editParties,
  emitMove,
  refuseLockedFields,
  type SendDeps,
  sendDocumentLink,
  totalsView,
  writeEdit,
} from '../billing/documents.js';
import { type PricedDocument, priceLines, taxRateFor, totalsColumns } from '../billing/line-items.js';
import { nextDocumentNumbers } from '../billing/numbering.js';
import { type CustomerRow, requireCustomers, requireProperty } from '../customers/customers.refs.js';
import { type LastEmail, lastEmailOf } from '../mail/mail.service.js';
import { recordPortalView } from '../portal-links/portal-links.service.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { postInvoiceIssued, postInvoiceVoid, postInvoiceWriteOff } from './invoices.ledger.js';
import { invoicePdfSource } from './invoices.pdf.js';
import type { PaymentMethod } from './invoices.schemas.js';
import {
  type InvoiceStatus,
  type InvoiceTrigger,
  invoiceMachine,
  LIMITED_EDIT_FIELDS,
  TRIGGER_EVENT,
} from './invoices.transitions.js';

export type InvoiceRow = typeof invoices.$inferSelect;
type LineRow = typeof invoiceLineItems.$inferSelect;
type PaymentRow = typeof payments.$inferSelect;

/** What `send` needs beyond the transaction (billing/documents.ts names it; callers import it from here too). */
export type { SendDeps };

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
    ...totalsView(r, lines),
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

export async function detailOf(ctx: Ctx, row: InvoiceRow): Promise<InvoiceDetailView> {
  const lines = await invoiceLines.stored(ctx, row.id);
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
const invoiceRows = documentRows(invoices, invoiceMachine);

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
  const events = { specific: TRIGGER_EVENT[trigger], statusChanged: 'invoice.status_changed' as const };
  await emitMove(ctx, events, oldStatus, detail.status, eventData(detail));
}

export async function getInvoice(ctx: Ctx, id: string): Promise<InvoiceDetailView> {
  return detailOf(ctx, await findRow(ctx, id, false));
}

export async function invoicePdf(ctx: Ctx, id: string): Promise<PdfSource> {
  return invoicePdfSource(ctx, await getInvoice(ctx, id));
}

export interface InvoiceListQuery {
  /** One or more states, comma-separated. */
  status?: string | undefined;
  dueBefore?: string | undefined;
  dueAfter?: string | undefined;
  customerId?: string | undefined;
  startDate?: string | undefined;
  dateFrom?: string | undefined;
  endDate?: string | undefined;
  dateTo?: string | undefined;
}

export async function listInvoices(ctx: Ctx, q: InvoiceListQuery, page: Page) {
  const { timezone } = await getOrgSettings(ctx);
  const range = dateRange(q, timezone);
  const where = documentFilters(ctx, invoices, q);
  if (range.from) where.push(gte(invoices.invoiceDate, range.from));
  if (range.to) where.push(lte(invoices.invoiceDate, range.to));
  if (q.dueBefore) where.push(lt(invoices.dueDate, q.dueBefore));
  if (q.dueAfter) where.push(gt(invoices.dueDate, q.dueAfter));
  return documentPage(ctx, { table: invoices, lines: invoiceLines, type: 'invoice' }, where, page, invoiceView);
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

/** Numbers, stores and announces a validated invoice (estimate conversion, an installment): insertInvoices of one. */
export async function insertInvoice(ctx: Ctx, doc: NewInvoice): Promise<InvoiceDetailView> {
  return (await insertInvoices(ctx, [doc]))[0] as InvoiceDetailView;
}

/**
 * Several validated invoices at once (billing the work): what insertInvoice does for
 * each (numbers, draft rows with their totals, lines, invoice.created), with the
 * numbers taken in one step of the counter, the rows and lines written in one
 * insert each and the events in one, so a batch of hundreds costs a few statements, not hundreds.
 */
export async function insertInvoices(ctx: Ctx, docs: NewInvoice[]): Promise<InvoiceDetailView[]> {
  if (docs.length === 0) return [];
  const numbers = await nextDocumentNumbers(ctx, 'invoice', docs.length);
  const values = docs.map(({ priced, ...columns }, i) => ({
    id: newId('inv'),
    invoiceNumber: numbers[i] as string,
    ...columns,
    organizationId: ctx.organizationId,
    status: 'draft',
    ...totalsColumns(priced),
  }));
  const rows: InvoiceRow[] = [];
  for (let i = 0; i < values.length; i += 500) {
    rows.push(
      ...(await ctx.tx
        .insert(invoices)
        .values(values.slice(i, i + 500))
        .returning()),
    );
  }
  await invoiceLines.insertMany(
    ctx,
    values.map((v, i) => ({ documentId: v.id, priced: (docs[i] as NewInvoice).priced })),
  );
  const lines = await invoiceLines.of(
    ctx,
    values.map((v) => v.id),
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  // A new draft has no payments and no mail yet.
  const details = values.map((v) => ({
    ...invoiceView(byId.get(v.id) as InvoiceRow, lines.get(v.id) ?? [], null),
    payments: [],
  }));
  await emitMany(ctx, 'invoice.created', details.map(eventData));
  return details;
}

export interface CreateInvoiceInput extends DocumentInput {
  invoiceDate?: string | undefined;
  dueDate?: string | undefined;
}

const checkDueDate = (invoiceDate: string, dueDate: string) => {
  if (dueDate < invoiceDate) throw invalidField('dueDate', `must not be before invoiceDate (${invoiceDate})`);
};

/**
 * New invoices from requests (POST /api/invoices, a storm's bill): each customer (400 if
 * unknown), property (400 unless the customer's), priced lines and dates checked before the
 * first write, with the settings and the customers read once, then stored as one batch.
 */
export async function createInvoices(ctx: Ctx, inputs: CreateInvoiceInput[]): Promise<InvoiceDetailView[]> {
  if (inputs.length === 0) return [];
  const settings = await getOrgSettings(ctx);
  const customers = await requireCustomers(
    ctx,
    inputs.map((i) => i.customerId),
    'customerId',
  );
  const docs: NewInvoice[] = [];
  for (const input of inputs) {
    const customer = customers.get(input.customerId) as CustomerRow;
    if (input.propertyId) await requireProperty(ctx, customer.id, input.propertyId);
    const priced = await priceLines(ctx, input.lineItems, taxRateFor(customer, settings.taxRate));
    const invoiceDate = input.invoiceDate ?? today(settings.timezone);
    const dueDate = input.dueDate ?? addDays(invoiceDate, settings.paymentTermsDays);
    checkDueDate(invoiceDate, dueDate);
    docs.push({
      customerId: customer.id,
      propertyId: input.propertyId ?? null,
      invoiceDate,
      dueDate,
      notes: input.notes ?? null,
      estimateId: null,
      priced,
    });
  }
  return insertInvoices(ctx, docs);
}

export const createInvoice = async (ctx: Ctx, input: CreateInvoiceInput): Promise<InvoiceDetailView> =>
  (await createInvoices(ctx, [input]))[0] as InvoiceDetailView;

export interface UpdateInvoiceInput extends DocumentPatch {
  invoiceDate?: string | undefined;
  dueDate?: string | undefined;
}

export async function updateInvoice(ctx: Ctx, id: string, patch: UpdateInvoiceInput): Promise<InvoiceDetailView> {
  const row = await findRow(ctx, id, true);
  if (row.status !== 'draft') refuseLockedFields('invoice', row.status, patch, LIMITED_EDIT_FIELDS);
  const parties = await editParties(ctx, row, patch, invoiceLines);
  const invoiceDate = patch.invoiceDate ?? row.invoiceDate;
  const dueDate = patch.dueDate ?? row.dueDate;
  checkDueDate(invoiceDate, dueDate);
  const settings = await getOrgSettings(ctx);

  // A due date moved to today or later is a trigger the table takes only from overdue
  // (back to sent, or partially_paid when something was paid); elsewhere it is just an edit.
  let reopen: InvoiceTrigger | undefined;
  if (patch.dueDate !== undefined && dueDate >= today(settings.timezone)) {
    const trigger = row.amountPaidCents > 0 ? 'due_date_extended_after_payment' : 'due_date_extended';
    if (canTake(invoiceMachine, row.status as InvoiceStatus, trigger)) reopen = trigger;
  }

  const status = reopen ? { status: take(invoiceMachine, row.status as InvoiceStatus, reopen) } : {};
  const columns = { ...status, invoiceDate, dueDate };
  const updated = await writeEdit<InvoiceRow>(ctx, invoices, invoiceLines, row, patch, parties, columns);
  const detail = await detailOf(ctx, updated);
  if (reopen) await emitInvoiceTransition(ctx, reopen, row.status, detail);
  return detail;
}

/**
 * A draft goes (its lines with it); the billing keys that named it let go of it first (no ON
 * DELETE SET NULL since drizzle/0038); the jobs, estimates and visits naming it are cleared by
 * flows/delete-invoice.ts before this.
 */
export async function deleteInvoice(ctx: Ctx, id: string): Promise<void> {
  await clearReferences(ctx, invoiceBillingKeys, invoiceBillingKeys.invoiceId, [id]);
  await invoiceRows.deleteDraft(ctx, id);
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
  const { before, row } = await invoiceRows.move(ctx, id, trigger, extra);
  await postTransition(ctx, trigger, before, row);
  const detail = await detailOf(ctx, row);
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
export async function sendInvoice(ctx: Ctx, id: string, deps: SendDeps, opts: { email?: boolean } = {}) {
  const { detail } = await transition(ctx, id, 'send', { sentAt: new Date() });
  return sendDocumentLink(
    ctx,
    'invoice',
    detail,
    deps,
    ({ settings, from, url }) => ({
      subject: `Invoice ${detail.invoiceNumber} from ${from}`,
      lines: [
        `Invoice ${detail.invoiceNumber} for ${detail.total.toFixed(2)} ${settings.currency} is due on ${detail.dueDate}.`,
        `Balance due: ${detail.balance.toFixed(2)} ${settings.currency}.`,
        '',
        `View it online: ${url}`,
        '',
        `— ${from}`,
      ],
    }),
    opts,
  );
}

/** The customer's view through a link; records when the link was last opened. */
export async function viewInvoiceInPortal(ctx: Ctx, id: string) {
  const detail = await getInvoice(ctx, id);
  await recordPortalView(ctx);
  return detail;
}

/** The overdue sweep for one organization: open invoices due before `todayDate`, each with its events. */
export const markInvoicesOverdue = (ctx: Ctx, todayDate: string, limit: number): Promise<number> =>
  invoiceRows.sweep(ctx, 'overdue', 'dueDate', todayDate, limit, async (before, row) =>
    emitInvoiceTransition(ctx, 'overdue', before.status, await detailOf(ctx, row)),
  );
