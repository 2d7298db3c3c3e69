import { type TSchema, Type } from 'typebox';
import { BillPayment } from '../bill-payments/bill-payments.schemas.js';
import { Bill } from '../bills/bills.schemas.js';
import { Contract } from '../contracts/contracts.schemas.js';
import { TimeEntry } from '../crew-tracking/time-entries.schemas.js';
import { Customer } from '../customers/customers.schemas.js';
import { Estimate } from '../estimates/estimates.schemas.js';
import { InvoiceDetail } from '../invoices/invoices.schemas.js';
import { Job } from '../jobs/jobs.schemas.js';
import { Payment, PaymentDetail, Refund } from '../payments/payments.schemas.js';
import { PurchaseOrder } from '../purchase-orders/purchase-orders.schemas.js';
import { parsePath } from './workflows.conditions.js';

/*
 * The shape of each catalog event's `data` (decisions.md §5 and operations.md: the
 * resource id, the resource in its REST shape under its name, plus the named fields),
 * as the emitting modules write it. A condition's path "cannot exist" when:
 *  - it is not a dotted path of identifiers and array indexes (`invoice.lineItems.0.amount`),
 *    or names `__proto__`/`prototype`/`constructor`;
 *  - its first segment is not a field of the trigger's data (`invoice.created` has
 *    invoiceId, invoiceNumber, amountDue, invoice — not `customer`);
 *  - below that it leaves the field's REST schema: a property the resource does not
 *    have, a segment under a scalar, a non-index under an array.
 * Below a field whose schema is open (no listed properties) any path is accepted.
 */

const Str = Type.String();
const Num = Type.Number();
const Status = { oldStatus: Str, newStatus: Str };

const customer = { customerId: Str, customer: Customer };
const job = { jobId: Str, job: Job };
const invoice = { invoiceId: Str, invoiceNumber: Str, amountDue: Num, invoice: InvoiceDetail };
const estimate = { estimateId: Str, estimateNumber: Str, estimate: Estimate };
const contract = { contractId: Str, contract: Contract, ...Status };
const po = { purchaseOrderId: Str, poNumber: Str, vendorId: Str, total: Num, purchaseOrder: PurchaseOrder };
const bill = { billId: Str, billNumber: Str, vendorId: Str, total: Num, balance: Num, bill: Bill };
const billPayment = {
  billPaymentId: Str,
  vendorId: Str,
  amount: Num,
  billIds: Type.Array(Str),
  billPayment: BillPayment,
};

const SHAPES: ReadonlyMap<string, Record<string, TSchema>> = new Map<string, Record<string, TSchema>>([
  ['customer.created', customer],
  ['customer.updated', customer],
  ['customer.deleted', { customerId: Str }],
  ['job.created', job],
  ['job.completed', { ...job, ...Status }],
  ['job.cancelled', { ...job, ...Status }],
  ['job.status_changed', { ...job, ...Status }],
  ['invoice.created', invoice],
  ['invoice.sent', { ...invoice, ...Status }],
  ['invoice.paid', { ...invoice, ...Status }],
  ['invoice.overdue', { ...invoice, ...Status }],
  ['invoice.voided', { ...invoice, ...Status }],
  ['invoice.written_off', { ...invoice, ...Status }],
  ['invoice.status_changed', { ...invoice, ...Status }],
  ['estimate.created', estimate],
  ['estimate.sent', { ...estimate, ...Status }],
  ['estimate.accepted', { ...estimate, ...Status }],
  ['estimate.declined', { ...estimate, ...Status }],
  ['estimate.converted', { ...estimate, ...Status }],
  ['estimate.status_changed', { ...estimate, ...Status }],
  ['contract.sent', contract],
  ['contract.signed', contract],
  ['payment.received', { paymentId: Str, ...invoice, amount: Num, origin: Str, payment: Payment }],
  [
    'payment.refunded',
    {
      paymentId: Str,
      invoiceId: Str,
      refundId: Str,
      refundedAmount: Num,
      origin: Str,
      reason: Str,
      payment: PaymentDetail,
      refund: Refund,
    },
  ],
  ['purchase-order.created', po],
  ['purchase-order.sent', po],
  ['purchase-order.received', po],
  ['purchase-order.cancelled', po],
  [
    'time_entry.completed',
    {
      timeEntryId: Str,
      memberId: Str,
      userId: Str,
      jobId: Str,
      startedAt: Str,
      endedAt: Str,
      durationMinutes: Num,
      timeEntry: TimeEntry,
    },
  ],
  ['bill.created', bill],
  ['bill.approved', bill],
  ['bill.paid', bill],
  ['bill.voided', bill],
  ['bill_payment.created', billPayment],
  ['bill_payment.settled', billPayment],
  ['bill_payment.failed', billPayment],
]);

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
}

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** Whether `rest` can be walked inside `schema`. */
function fits(schema: JsonSchema, rest: readonly string[]): boolean {
  if (rest.length === 0) return true;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return branches.some((b) => fits(b, rest));
  if (schema.allOf) return schema.allOf.some((b) => fits(b, rest));
  const [head, ...tail] = rest as [string, ...string[]];
  if (schema.properties) {
    if (!Object.hasOwn(schema.properties, head)) return false;
    return fits(schema.properties[head] as JsonSchema, tail);
  }
  if (schema.items) return /^[0-9]+$/.test(head) && fits(schema.items, tail);
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (schema.const !== undefined || schema.enum !== undefined) return false;
  if (types.length > 0 && types.every((t) => SCALAR_TYPES.has(t))) return false;
  // Open object or unknown: nothing to check against.
  return true;
}

/** Why `path` cannot exist in the data of `event`, or undefined when it can. */
export function pathProblem(event: string, path: string): string | undefined {
  const parts = parsePath(path);
  if (!parts) {
    return 'must be a dotted path of names and array indexes (e.g. invoice.total or amountDue)';
  }
  const shape = SHAPES.get(event);
  if (!shape) return undefined;
  const [root, ...rest] = parts as [string, ...string[]];
  if (!Object.hasOwn(shape, root)) {
    return `${event} data has no field "${root}" (fields: ${Object.keys(shape).join(', ')})`;
  }
  if (!fits(shape[root] as JsonSchema, rest)) return `${path} does not exist in ${event} data`;
  return undefined;
}

/** The trigger data's top-level fields of a catalog event (documentation, tests). */
export function dataFields(event: string): string[] {
  return Object.keys(SHAPES.get(event) ?? {});
}
