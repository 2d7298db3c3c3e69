import { Type } from 'typebox';
import { EnumList, StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, exampleOf, Money, Nullable, PageQuery } from '../../platform/schemas.js';
import { createDocumentBody, sentTextFields, updateDocumentBody } from '../billing/document-schemas.js';
import { LineItem } from '../billing/line-items.js';
import { LastEmail } from '../mail/mail.schemas.js';
import { ExpandedFields, ExpandQuery } from '../properties/properties.expand.js';
import { INVOICE_STATUSES } from './invoices.transitions.js';

export const InvoiceStatusSchema = StringEnum(INVOICE_STATUSES);

export const PAYMENT_METHODS = ['cash', 'check', 'card', 'ach', 'other'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

export const Payment = Type.Object(
  {
    id: Type.String({ description: 'pay_…' }),
    amount: Type.Number(),
    paymentDate: DateOnly(),
    method: StringEnum(PAYMENT_METHODS),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

const invoiceFields = {
  id: Type.String({ description: 'inv_…' }),
  invoiceNumber: Type.String({ description: 'INV-000001 upwards, per organization, no gaps' }),
  customerId: Type.String(),
  propertyId: Nullable(Type.String()),
  estimateId: Nullable(Type.String({ description: 'The estimate this invoice was converted from' })),
  status: InvoiceStatusSchema,
  lineItems: Type.Array(LineItem),
  subtotal: Type.Number({ description: 'Sum of line amounts' }),
  taxRate: Type.Number({ description: 'Percent applied (0 for a tax-exempt customer)' }),
  tax: Type.Number({ description: 'round(taxable subtotal × taxRate / 100), half away from zero' }),
  total: Type.Number({ description: 'subtotal + tax' }),
  amountPaid: Type.Number(),
  balance: Type.Number({ description: 'total − amountPaid; 0 once void or written off' }),
  invoiceDate: DateOnly(),
  dueDate: DateOnly(),
  notes: Nullable(Type.String()),
  sentAt: Nullable(DateTime()),
  lastEmail: LastEmail,
  createdAt: DateTime(),
  updatedAt: DateTime(),
  ...ExpandedFields,
};

export const Invoice = Type.Object(invoiceFields, {
  additionalProperties: false,
  examples: [
    {
      id: 'inv_01JDSE805A9PC85W11DRS12HVT',
      invoiceNumber: 'INV-000001',
      customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
      propertyId: 'prp_01JD8Q7A4C2E6G8J0L2N4Q6S8U',
      estimateId: null,
      status: 'partially_paid',
      lineItems: [
        {
          id: 'lin_01JD393C5PFTPE3J479AVV3GC8',
          serviceId: null,
          description: 'Weekly mowing',
          quantity: 4,
          unitPrice: 45,
          taxable: true,
          amount: 180,
        },
        {
          id: 'lin_01JD7B0C1WEA7KS48F2X6X0VNK',
          serviceId: null,
          description: 'Hedge trimming',
          quantity: 1.5,
          unitPrice: 60,
          taxable: true,
          amount: 90,
        },
      ],
      subtotal: 270,
      taxRate: 8.25,
      tax: 22.28,
      total: 292.28,
      amountPaid: 150,
      balance: 142.28,
      invoiceDate: '2026-04-30',
      dueDate: '2026-05-30',
      notes: 'April service',
      sentAt: '2026-04-30T16:02:17.000Z',
      lastEmail: {
        status: 'sent',
        to: ['dana.whitfield@example.com'],
        sentAt: '2026-04-30T16:02:17.000Z',
        error: null,
      },
      createdAt: '2026-04-30T16:02:17.000Z',
      updatedAt: '2026-05-03T13:45:02.000Z',
    },
  ],
});
export const InvoiceDetail = Type.Object(
  { ...invoiceFields, payments: Type.Array(Payment, { description: 'Oldest first' }) },
  {
    additionalProperties: false,
    examples: [
      {
        ...exampleOf(Invoice),
        payments: [
          {
            id: 'pay_01JDX7EJFGTYTPRQYVHCSATN93',
            amount: 150,
            paymentDate: '2026-05-03',
            method: 'check',
            createdAt: '2026-05-03T13:45:02.000Z',
          },
        ],
      },
    ],
  },
);
export const SentInvoice = Type.Object(
  {
    ...invoiceFields,
    payments: Type.Array(Payment),
    portalUrl: Type.String({ description: 'The customer’s link (also emailed)' }),
    emailedTo: Type.Array(Type.String(), {
      description:
        'Addresses mailed; empty when the customer has no email (share portalUrl by hand) or channels left out "email"',
    }),
    ...sentTextFields,
  },
  { additionalProperties: false },
);

export const CreateInvoiceBody = createDocumentBody(
  {
    invoiceDate: Type.Optional(
      DateOnly(
        'Default: today in the organization’s timezone (a date only, YYYY-MM-DD: the spec types it as a date; a date-time is 400)',
      ),
    ),
    dueDate: Type.Optional(
      DateOnly(
        'Default: invoiceDate + settings paymentTermsDays; not before invoiceDate (a date only, YYYY-MM-DD: the spec types it as a date; a date-time is 400)',
      ),
    ),
  },
  {
    invoiceDate: '2026-04-30',
    dueDate: '2026-05-30',
    notes: 'April service',
  },
  'A property of the customer',
);

export const UpdateInvoiceBody = updateDocumentBody(
  {
    invoiceDate: Type.Optional(DateOnly('YYYY-MM-DD: the spec types it as a date; a date-time is 400')),
    dueDate: Type.Optional(DateOnly('YYYY-MM-DD: the spec types it as a date; a date-time is 400')),
  },
  'Partial. A draft accepts every field; after that only dueDate and notes (else 409 INVALID_STATE).',
);

export const PaymentBody = Type.Object(
  {
    amount: Money('Greater than 0 and at most the balance; at most two decimals'),
    paymentDate: Type.Optional(
      DateOnly(
        'Default: today in the organization’s timezone; not in the future (a date only, YYYY-MM-DD: the spec types it as a date; a date-time is 400)',
      ),
    ),
    method: StringEnum(PAYMENT_METHODS),
    reference: Type.Optional(
      Type.String({ maxLength: 200, description: 'Cheque number, transfer reference, … (shown on the payment)' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ amount: 150, paymentDate: '2026-05-03', method: 'check', reference: 'Cheque 1042' }],
  },
);

const Bound = (description: string) => Type.String({ minLength: 1, maxLength: 40, description });

export const InvoiceListQuery = Type.Object(
  {
    status: Type.Optional(
      EnumList(INVOICE_STATUSES, 'Invoices in these states ("unpaid": sent,partially_paid,overdue)'),
    ),
    dueBefore: Type.Optional(DateOnly('Invoices due before this date (dueDate < dueBefore), YYYY-MM-DD')),
    dueAfter: Type.Optional(DateOnly('Invoices due after this date (dueDate > dueAfter), YYYY-MM-DD')),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    startDate: Type.Optional(
      Bound('First invoiceDate included. YYYY-MM-DD, or a date-time whose calendar date in the org timezone is used'),
    ),
    dateFrom: Type.Optional(Bound('Alias of startDate (startDate wins)')),
    endDate: Type.Optional(Bound('Last invoiceDate included (inclusive); same forms as startDate')),
    dateTo: Type.Optional(Bound('Alias of endDate (endDate wins)')),
    ...ExpandQuery,
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const InvoiceListResponse = Envelope(Type.Array(Invoice));
export const InvoiceResponse = Envelope(InvoiceDetail);
export const InvoiceExpandQuery = Type.Object(ExpandQuery, { additionalProperties: false });
export const SentInvoiceResponse = Envelope(SentInvoice);

const JobId = Type.String({ minLength: 1, maxLength: 64, description: 'job_…' });
const Send = Type.Boolean({
  description: 'true: send each invoice at once (as POST /api/invoices/{id}/send: ledger posting, invoice.sent, mail)',
});

export const FromJobsBody = Type.Object(
  {
    jobIds: Type.Array(JobId, {
      minItems: 1,
      maxItems: 1000,
      uniqueItems: true,
      description:
        'Completed jobs with lineItems, not yet billed, of this organization (unknown ids → 400 naming them; a job not completed or without lines → 409 INVALID_STATE; a billed job → 409 CONFLICT; nothing is written then)',
    }),
    send: Type.Optional(Send),
  },
  {
    additionalProperties: false,
    examples: [{ jobIds: ['job_01JDYY909VFHTXJTQTNYRZYAKQ', 'job_01JDYY909VFHTXJTQTNYRZYAKR'], send: false }],
  },
);

export const BatchInvoicesBody = Type.Object(
  {
    from: DateOnly('First completion date (YYYY-MM-DD, in the organization’s timezone)'),
    to: DateOnly('Last completion date, inclusive; not before from (else 400)'),
    customerIds: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        minItems: 1,
        maxItems: 1000,
        uniqueItems: true,
        description: 'Only these customers (each must be a customer of the organization, else 400)',
      }),
    ),
    send: Type.Optional(Send),
  },
  {
    additionalProperties: false,
    examples: [{ from: '2026-10-01', to: '2026-10-31', send: true }],
  },
);

export const InvoicesMadeResponse = Envelope(
  Type.Object(
    {
      invoices: Type.Array(InvoiceDetail, {
        description:
          'One invoice per customer, in the order of the customers’ first job; each line reads "2026-11-03 — Weekly mowing" (the job’s date, an em dash, the job line)',
      }),
    },
    { additionalProperties: false },
  ),
);
