import type { TSchema } from 'typebox';
import { BillPayment } from '../modules/bill-payments/bill-payments.schemas.js';
import { Bill } from '../modules/bills/bills.schemas.js';
import { Contract } from '../modules/contracts/contracts.schemas.js';
import { TimeEntry } from '../modules/crew-tracking/time-entries.schemas.js';
import { Customer } from '../modules/customers/customers.schemas.js';
import { Estimate } from '../modules/estimates/estimates.schemas.js';
import { InvoiceDetail } from '../modules/invoices/invoices.schemas.js';
import { Job } from '../modules/jobs/jobs.schemas.js';
import { Payment, PaymentDetail, Refund } from '../modules/payments/payments.schemas.js';
import { PurchaseOrder } from '../modules/purchase-orders/purchase-orders.schemas.js';
import { type CatalogEvent, EVENT_CATALOG } from './catalog.js';

/**
 * What `data` carries for each catalog event (what the services pass to `emit`), for the
 * OpenAPI `webhooks` section: ids and numbers at the top, the resource in its REST shape
 * under its name (a `$ref` to the same schema the API answers with), and `oldStatus` /
 * `newStatus` on transitions. Kept next to the catalog so a new event gets its payload here.
 */

type Json = Record<string, unknown>;

/** The resource schemas the payloads reference, by component name. */
export const PAYLOAD_SCHEMAS: Record<string, TSchema> = {
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
};

const ref = (name: keyof typeof PAYLOAD_SCHEMAS & string, description?: string): Json => ({
  $ref: `#/components/schemas/${name}`,
  ...(description ? { description } : {}),
});
const str = (description: string): Json => ({ type: 'string', description });
const money = (description: string): Json => ({ type: 'string', description: `${description} (decimal string)` });
const transition = {
  oldStatus: str('Status before the change, upper case (on status changes)'),
  newStatus: str('Status after the change, upper case (on status changes)'),
};

interface Payload {
  properties: Json;
  required: string[];
}

const invoiceData: Payload = {
  properties: {
    invoiceId: str('inv_…'),
    invoiceNumber: str('The invoice number'),
    amountDue: money('Balance still due'),
    invoice: ref('InvoiceDetail', 'The invoice as GET /api/invoices/{id} returns it'),
    ...transition,
  },
  required: ['invoiceId', 'invoice'],
};

function payloadOf(event: CatalogEvent): Payload {
  const [subject] = event.split('.') as [string];
  switch (subject) {
    case 'customer':
      return event === 'customer.deleted'
        ? { properties: { customerId: str('cus_… of the deleted customer') }, required: ['customerId'] }
        : {
            properties: { customerId: str('cus_…'), customer: ref('Customer', 'The customer after the change') },
            required: ['customerId', 'customer'],
          };
    case 'job':
      return {
        properties: { jobId: str('job_…'), job: ref('Job', 'The job after the change'), ...transition },
        required: ['jobId', 'job'],
      };
    case 'invoice':
      return invoiceData;
    case 'estimate':
      return {
        properties: {
          estimateId: str('est_…'),
          estimateNumber: str('The estimate number'),
          estimate: ref('Estimate', 'The estimate after the change'),
          ...transition,
        },
        required: ['estimateId', 'estimate'],
      };
    case 'contract':
      return {
        properties: {
          contractId: str('con_…'),
          contract: ref('Contract', 'The contract after the change'),
          ...transition,
        },
        required: ['contractId', 'contract'],
      };
    case 'payment':
      return event === 'payment.refunded'
        ? {
            properties: {
              paymentId: str('pay_…'),
              invoiceId: str('inv_…'),
              refundId: str('The refund id'),
              refundedAmount: money('Amount refunded by this refund'),
              origin: str('Where the refund came from (api, stripe, …)'),
              reason: { type: ['string', 'null'], description: 'Reason given, if any' },
              payment: ref('PaymentDetail', 'The payment after the refund, with its refunds'),
              refund: ref('Refund'),
            },
            required: ['paymentId', 'invoiceId', 'refundId', 'payment', 'refund'],
          }
        : {
            properties: {
              paymentId: str('pay_…'),
              ...invoiceData.properties,
              amount: money('Amount received'),
              origin: str('Where the payment came from (manual, stripe, portal, …)'),
              payment: ref('Payment'),
            },
            required: ['paymentId', 'invoiceId', 'payment', 'invoice'],
          };
    case 'purchase-order':
      return {
        properties: {
          purchaseOrderId: str('The purchase order id'),
          poNumber: str('The purchase order number'),
          vendorId: str('The vendor id'),
          total: money('Order total'),
          purchaseOrder: ref('PurchaseOrder', 'The purchase order after the change'),
        },
        required: ['purchaseOrderId', 'purchaseOrder'],
      };
    case 'bill':
      return {
        properties: {
          billId: str('The bill id'),
          billNumber: str('The bill number'),
          vendorId: str('The vendor id'),
          total: money('Bill total'),
          balance: money('Balance still to pay'),
          bill: ref('Bill', 'The bill after the change'),
        },
        required: ['billId', 'bill'],
      };
    case 'bill_payment':
      return {
        properties: {
          billPaymentId: str('The bill payment id'),
          vendorId: str('The vendor id'),
          amount: money('Amount paid'),
          billIds: { type: 'array', items: { type: 'string' }, description: 'Bills this payment is allocated to' },
          billPayment: ref('BillPayment', 'The bill payment after the change'),
        },
        required: ['billPaymentId', 'billPayment'],
      };
    case 'time_entry':
      return {
        properties: {
          timeEntryId: str('tme_…'),
          memberId: str('mem_…'),
          userId: str('The user who worked'),
          jobId: { type: ['string', 'null'], description: 'The job worked on, if any' },
          startedAt: { type: 'string', format: 'date-time' },
          endedAt: { type: 'string', format: 'date-time' },
          durationMinutes: { type: 'integer', description: 'Whole minutes' },
          timeEntry: ref('TimeEntry', 'The completed work entry'),
        },
        required: ['timeEntryId', 'memberId', 'durationMinutes'],
      };
    default:
      throw new Error(`No webhook payload described for ${event}: add it to src/delivery/payloads.ts`);
  }
}

/** The `data` schema of every catalog event, by event type. */
export const WEBHOOK_PAYLOADS: ReadonlyMap<CatalogEvent, Payload> = new Map(
  EVENT_CATALOG.map((event) => [event, payloadOf(event)]),
);
