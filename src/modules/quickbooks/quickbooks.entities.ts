import type { quickbooksSyncJobs } from '../../db/schema/index.js';
import { type JobCalls, notOk, type Result, upsert, waitFor, written } from './quickbooks.calls.js';
import type { Entity } from './quickbooks.feed.js';
import { itemFor, refundAccount } from './quickbooks.items.js';

/*
 * Our records as QuickBooks entities (operations.md §11): customers → Customer (made inactive,
 * Active=false, when deleted or anonymized here, the latter with its personal fields cleared
 * there too), invoices leaving draft → Invoice (DocNumber = our number, a line's Item its
 * service's, tax as TotalTax; a void voids it), payments → Payment linked to the invoice,
 * refunds → RefundReceipt paid from the company's bank account.
 */

type JobRow = typeof quickbooksSyncJobs.$inferSelect;

type Money = number;
interface CustomerPayload {
  id: string;
  name: string;
  firstName: string;
  lastName: string | null;
  company: string | null;
  email: string | null;
  phone: string | null;
  billingAddress: string | null;
  billingCity: string | null;
  billingState: string | null;
  billingZip: string | null;
  notes: string | null;
  status?: string;
}
interface InvoicePayload {
  id: string;
  invoiceNumber: string;
  customerId: string;
  status: string;
  lineItems: Array<{
    serviceId?: string | null;
    description: string;
    quantity: number;
    unitPrice: Money;
    amount: Money;
    taxable?: boolean;
  }>;
  tax: Money;
  invoiceDate: string;
  dueDate: string;
  notes: string | null;
}
interface RefundPayload {
  refund: { id: string; amount: Money; reason: string | null; createdAt: string };
  payment: { id: string; invoiceId: string; invoiceNumber: string; customerId: string };
}
interface PaymentPayload {
  payment: { id: string; amount: Money; paymentDate: string; method: string };
  invoiceId: string;
  customerId: string;
}

/** The name anonymizing gives a customer (customers.service.ts ANONYMIZED_NAME), every other personal field cleared. */
const ANONYMIZED = 'Anonymized';

/** An anonymized customer: the customer event carries no flag, but erasure leaves this shape and no other. */
function anonymized(c: CustomerPayload): boolean {
  return (
    c.firstName === ANONYMIZED &&
    c.lastName === null &&
    c.company === null &&
    c.email === null &&
    c.phone === null &&
    c.billingAddress === null
  );
}

function customerBody(c: CustomerPayload): Record<string, unknown> {
  const name = (c.name || [c.firstName, c.lastName].filter(Boolean).join(' ') || c.company || c.id).slice(0, 100);
  return {
    DisplayName: name,
    GivenName: c.firstName?.slice(0, 100) ?? undefined,
    FamilyName: c.lastName?.slice(0, 100) ?? undefined,
    CompanyName: c.company ?? undefined,
    PrimaryEmailAddr: c.email ? { Address: c.email } : undefined,
    PrimaryPhone: c.phone ? { FreeFormNumber: c.phone } : undefined,
    BillAddr: c.billingAddress
      ? {
          Line1: c.billingAddress,
          City: c.billingCity ?? undefined,
          CountrySubDivisionCode: c.billingState ?? undefined,
          PostalCode: c.billingZip ?? undefined,
        }
      : undefined,
    Notes: c.notes ? c.notes.slice(0, 2000) : undefined,
    Active: c.status === undefined ? true : c.status !== 'archived',
  };
}

/**
 * An erased customer as QuickBooks keeps it: inactive, every personal field emptied (a sparse
 * update leaves out what is absent, so each is sent empty), named apart by our id since
 * DisplayName must stay unique there.
 */
function erasedBody(id: string): Record<string, unknown> {
  return {
    DisplayName: `${ANONYMIZED} ${id}`.slice(0, 100),
    GivenName: ANONYMIZED,
    FamilyName: '',
    CompanyName: '',
    PrimaryEmailAddr: { Address: '' },
    PrimaryPhone: { FreeFormNumber: '' },
    BillAddr: { Line1: '', City: '', CountrySubDivisionCode: '', PostalCode: '' },
    Notes: '',
    Active: false,
  };
}

async function syncCustomer(calls: JobCalls, job: JobRow): Promise<Result> {
  const p = job.payload as { customer?: CustomerPayload; deleted?: boolean };
  if (p.deleted || (p.customer && anonymized(p.customer))) {
    // Gone here: made inactive there (QuickBooks deletes no customer), if it ever got there.
    if (!(await calls.known('customer', job.entityId))) return { kind: 'done', quickbooksId: null };
    const body = p.deleted ? { Active: false } : erasedBody(job.entityId);
    return upsert(calls, 'customer', job.entityId, 'Customer', body, job.id);
  }
  return upsert(calls, 'customer', job.entityId, 'Customer', customerBody(p.customer as CustomerPayload), job.id);
}

async function syncInvoice(calls: JobCalls, job: JobRow): Promise<Result> {
  const inv = (job.payload as { invoice: InvoicePayload }).invoice;
  if (inv.status === 'void') {
    const known = await calls.known('invoice', inv.id);
    if (!known) return { kind: 'done', quickbooksId: null }; // never reached QuickBooks: nothing to void
    const voided = await calls.request(
      'POST',
      'invoice',
      { operation: 'void', requestid: calls.rid('invoice', inv.id, 'void') },
      { Id: known.quickbooksId, SyncToken: known.syncToken, sparse: true },
    );
    if (voided.kind !== 'ok') return notOk(voided);
    const w = written(voided.body, 'Invoice');
    if (w) await calls.remember('invoice', inv.id, w.Id, w.SyncToken);
    return { kind: 'done', quickbooksId: known.quickbooksId };
  }
  const customer = await calls.known('customer', inv.customerId);
  if (!customer) return waitFor(`customer ${inv.customerId}`);
  const items = new Map<string, string>();
  for (const l of inv.lineItems) {
    const key = l.serviceId ?? '';
    if (items.has(key)) continue;
    const item = await itemFor(calls, l.serviceId ?? null, l.description);
    if ('kind' in item) return item;
    items.set(key, item.id);
  }
  const body = {
    DocNumber: inv.invoiceNumber,
    TxnDate: inv.invoiceDate,
    DueDate: inv.dueDate,
    CustomerRef: { value: customer.quickbooksId },
    PrivateNote: inv.notes ?? undefined,
    Line: inv.lineItems.map((l) => ({
      DetailType: 'SalesItemLineDetail',
      Amount: l.amount,
      Description: l.description.slice(0, 4000),
      SalesItemLineDetail: {
        ItemRef: { value: items.get(l.serviceId ?? '') },
        Qty: l.quantity,
        UnitPrice: l.unitPrice,
        TaxCodeRef: { value: l.taxable === false ? 'NON' : 'TAX' },
      },
    })),
    TxnTaxDetail: { TotalTax: inv.tax },
  };
  return upsert(calls, 'invoice', inv.id, 'Invoice', body, job.id);
}

async function syncPayment(calls: JobCalls, job: JobRow): Promise<Result> {
  const p = job.payload as PaymentPayload;
  const known = await calls.known('payment', p.payment.id);
  if (known) return { kind: 'done', quickbooksId: known.quickbooksId }; // a payment is written once
  const invoice = await calls.known('invoice', p.invoiceId);
  if (!invoice) return waitFor(`invoice ${p.invoiceId}`);
  const customer = await calls.known('customer', p.customerId);
  if (!customer) return waitFor(`customer ${p.customerId}`);
  const body = {
    CustomerRef: { value: customer.quickbooksId },
    TotalAmt: p.payment.amount,
    TxnDate: p.payment.paymentDate,
    PrivateNote: `${p.payment.id} (${p.payment.method})`,
    Line: [{ Amount: p.payment.amount, LinkedTxn: [{ TxnId: invoice.quickbooksId, TxnType: 'Invoice' }] }],
  };
  return upsert(calls, 'payment', p.payment.id, 'Payment', body, job.id);
}

/**
 * A refund: money given back to the customer from the company's bank account (a RefundReceipt,
 * one line under the "Services" item, untaxed: the tax of the invoice stays as QuickBooks has
 * it). After its payment, so QuickBooks never shows money returned that it never saw come in.
 * Dated the day it was made (UTC; our ledger posts it on the organization's today).
 */
async function syncRefund(calls: JobCalls, job: JobRow): Promise<Result> {
  const { refund, payment } = job.payload as RefundPayload;
  const known = await calls.known('refund', refund.id);
  if (known) return { kind: 'done', quickbooksId: known.quickbooksId }; // a refund is written once
  if (!(await calls.known('payment', payment.id))) return waitFor(`payment ${payment.id}`);
  const customer = await calls.known('customer', payment.customerId);
  if (!customer) return waitFor(`customer ${payment.customerId}`);
  const item = await itemFor(calls, null, 'Services');
  if ('kind' in item) return item;
  const bank = await refundAccount(calls);
  if ('kind' in bank) return bank;
  const what = `Refund of payment ${payment.id} on invoice ${payment.invoiceNumber}`;
  const body = {
    CustomerRef: { value: customer.quickbooksId },
    TxnDate: refund.createdAt.slice(0, 10),
    DepositToAccountRef: { value: bank.id },
    TotalAmt: refund.amount,
    PrivateNote: `${refund.id}${refund.reason ? `: ${refund.reason}` : ''}`.slice(0, 4000),
    Line: [
      {
        DetailType: 'SalesItemLineDetail',
        Amount: refund.amount,
        Description: what,
        SalesItemLineDetail: {
          ItemRef: { value: item.id },
          Qty: 1,
          UnitPrice: refund.amount,
          TaxCodeRef: { value: 'NON' },
        },
      },
    ],
  };
  return upsert(calls, 'refund', refund.id, 'RefundReceipt', body, job.id);
}

/** The writer of each kind of job. */
export const HANDLERS: Record<Entity, (calls: JobCalls, job: JobRow) => Promise<Result>> = {
  customer: syncCustomer,
  invoice: syncInvoice,
  payment: syncPayment,
  refund: syncRefund,
};
