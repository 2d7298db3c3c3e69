import { type TObject, type TSchema, Type } from 'typebox';
import { type CatalogEvent, EVENT_CATALOG } from '../platform/events/catalog.js';
import { Nullable } from '../platform/schemas.js';
import { BillPayment } from './bill-payments/bill-payments.schemas.js';
import { Bill } from './bills/bills.schemas.js';
import { Contract } from './contracts/contracts.schemas.js';
import { TimeEntry } from './crew-tracking/time-entries.schemas.js';
import { Customer } from './customers/customers.schemas.js';
import { Estimate } from './estimates/estimates.schemas.js';
import { InvoiceDetail } from './invoices/invoices.schemas.js';
import { Job } from './jobs/jobs.schemas.js';
import { PeriodClose } from './ledger/ledger.schemas.js';
import { Message } from './messages/messages.schemas.js';
import { Payment, PaymentDetail, Refund } from './payments/payments.schemas.js';
import { PurchaseOrder } from './purchase-orders/purchase-orders.schemas.js';
import { Request } from './requests/requests.schemas.js';

/*
 * THE description of each catalog event's `data` (operations.md §3, decisions.md §5): the
 * resource id, the resource in its REST shape under its name, the named fields, and
 * `oldStatus`/`newStatus` on moves. Every field is taken from the resource's own response
 * schema, so an event types its money exactly as the API answers it (JSON numbers, decimals
 * of the currency) and cannot drift from it. Two readers, handed this list from the top:
 * the OpenAPI `webhooks` section (src/platform/openapi.ts: a resource schema, the same object,
 * becomes a `$ref` to its component named in EVENT_RESOURCES) and the workflow condition paths
 * (workflows.shapes.ts). The test harness validates every event the suite delivers against
 * the served document, so a service that sends something else fails CI.
 *
 * Lives beside `index.ts` because it names many modules; nothing low imports it.
 */

/** The resource schemas event data carries, by OpenAPI component name. */
export const EVENT_RESOURCES: Readonly<Record<string, TSchema>> = {
  Customer,
  Job,
  InvoiceDetail,
  Estimate,
  Contract,
  Payment,
  PaymentDetail,
  Refund,
  PurchaseOrder,
  Bill,
  BillPayment,
  TimeEntry,
  PeriodClose,
  Message,
  Request,
};

const described = <T extends TSchema>(schema: T, description: string): T => ({ ...schema, description });
const Status = {
  oldStatus: Type.String({ description: 'Status before the change, upper case' }),
  newStatus: Type.String({ description: 'Status after the change, upper case' }),
};
const closed = (fields: Record<string, TSchema>) => Type.Object(fields, { additionalProperties: false });

const customer = closed({ customerId: described(Customer.properties.id, 'cus_…'), customer: Customer });
const job = { jobId: described(Job.properties.id, 'job_…'), job: Job };
const invoice = {
  invoiceId: described(InvoiceDetail.properties.id, 'inv_…'),
  invoiceNumber: InvoiceDetail.properties.invoiceNumber,
  amountDue: described(InvoiceDetail.properties.balance, 'The invoice balance still due (its `balance`)'),
  invoice: InvoiceDetail,
};
const estimate = {
  estimateId: described(Estimate.properties.id, 'est_…'),
  estimateNumber: Estimate.properties.estimateNumber,
  estimate: Estimate,
};
const request = { requestId: described(Request.properties.id, 'req_…'), request: Request };
const contract = closed({
  contractId: described(Contract.properties.id, 'con_…'),
  contract: Contract,
  oldStatus: Type.Optional(Status.oldStatus),
  newStatus: Type.Optional(Status.newStatus),
});
const po = closed({
  purchaseOrderId: PurchaseOrder.properties.id,
  poNumber: PurchaseOrder.properties.poNumber,
  vendorId: PurchaseOrder.properties.vendorId,
  total: PurchaseOrder.properties.total,
  purchaseOrder: PurchaseOrder,
});
const bill = closed({
  billId: Bill.properties.id,
  billNumber: Bill.properties.billNumber,
  vendorId: Bill.properties.vendorId,
  total: Bill.properties.total,
  balance: Bill.properties.balance,
  bill: Bill,
});
const billPayment = closed({
  billPaymentId: BillPayment.properties.id,
  vendorId: BillPayment.properties.vendorId,
  amount: BillPayment.properties.amount,
  billIds: Type.Array(Type.String(), { description: 'The bills this payment is allocated to' }),
  billPayment: BillPayment,
});

const message = closed({
  messageId: described(Message.properties.id, 'msg_…'),
  customerId: Message.properties.customerId,
  message: Message,
});

const PAYLOADS: Record<CatalogEvent, TObject> = {
  'message.received': message,
  'message.delivered': message,
  'message.failed': message,
  'customer.created': customer,
  'customer.updated': customer,
  'customer.deleted': closed({ customerId: described(Customer.properties.id, 'cus_… of the deleted customer') }),
  'job.created': closed(job),
  'job.completed': closed({ ...job, ...Status }),
  'job.cancelled': closed({ ...job, ...Status }),
  'job.status_changed': closed({ ...job, ...Status }),
  'invoice.created': closed(invoice),
  'invoice.sent': closed({ ...invoice, ...Status }),
  'invoice.paid': closed({ ...invoice, ...Status }),
  'invoice.overdue': closed({ ...invoice, ...Status }),
  'invoice.voided': closed({ ...invoice, ...Status }),
  'invoice.written_off': closed({ ...invoice, ...Status }),
  'invoice.status_changed': closed({ ...invoice, ...Status }),
  'estimate.created': closed(estimate),
  'estimate.sent': closed({ ...estimate, ...Status }),
  'estimate.accepted': closed({ ...estimate, ...Status }),
  'estimate.declined': closed({ ...estimate, ...Status }),
  'estimate.converted': closed({ ...estimate, ...Status }),
  'estimate.status_changed': closed({ ...estimate, ...Status }),
  'request.created': closed(request),
  'request.converted': closed({
    ...request,
    customerId: described(Customer.properties.id, 'The customer it was converted for (cus_…)'),
    estimateId: Nullable(
      Type.String({ description: 'The draft estimate made (est_…), when converted to an estimate' }),
    ),
    jobId: Nullable(Type.String({ description: 'The job made (job_…), when converted to a job' })),
  }),
  'request.declined': closed(request),
  'contract.sent': contract,
  'contract.signed': contract,
  'payment.received': closed({
    paymentId: described(Payment.properties.id, 'pay_…'),
    ...invoice,
    amount: described(Payment.properties.amount, 'The amount received'),
    origin: Payment.properties.origin,
    payment: Payment,
  }),
  'payment.refunded': closed({
    paymentId: described(Payment.properties.id, 'pay_…'),
    invoiceId: described(InvoiceDetail.properties.id, 'inv_…'),
    refundId: Refund.properties.id,
    refundedAmount: described(Refund.properties.amount, 'The amount given back by this refund (positive)'),
    origin: Refund.properties.origin,
    reason: Type.Optional(Refund.properties.reason),
    payment: PaymentDetail,
    refund: Refund,
  }),
  'purchase-order.created': po,
  'purchase-order.sent': po,
  'purchase-order.received': po,
  'purchase-order.cancelled': po,
  'time_entry.completed': closed({
    timeEntryId: TimeEntry.properties.id,
    memberId: TimeEntry.properties.memberId,
    userId: TimeEntry.properties.userId,
    jobId: TimeEntry.properties.jobId,
    startedAt: TimeEntry.properties.startedAt,
    endedAt: described(TimeEntry.properties.startedAt, 'When the work ended (UTC)'),
    durationMinutes: Type.Integer({ description: 'Whole minutes, rounded' }),
    timeEntry: TimeEntry,
  }),
  'bill.created': bill,
  'bill.approved': bill,
  'bill.paid': bill,
  'bill.voided': bill,
  'bill_payment.created': billPayment,
  'bill_payment.settled': billPayment,
  'bill_payment.failed': billPayment,
  'ledger.period_closed': closed({
    closedThrough: described(PeriodClose.properties.closedThrough, 'The new closed date'),
    previousClosedThrough: described(PeriodClose.properties.closedThrough, 'The closed date before this close'),
    periodClose: PeriodClose,
  }),
};

/** The `data` schema of every catalog event, by event type, in catalog order. */
export const EVENT_PAYLOADS: ReadonlyMap<CatalogEvent, TObject> = new Map(
  EVENT_CATALOG.map((event) => [event, PAYLOADS[event]]),
);
