import { Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, exampleOf, Money, Nullable, PageQuery } from '../../platform/schemas.js';
import { InvoiceDetail, PAYMENT_METHODS } from '../invoices/invoices.schemas.js';
import { PAYMENT_ORIGINS, PAYMENT_STATUSES, REFUND_ORIGINS } from './payments.states.js';

export const Refund = Type.Object(
  {
    id: Type.String({ description: 'rfd_…' }),
    paymentId: Type.String(),
    amount: Type.Number({ description: 'Positive: the money given back by this refund' }),
    reason: Nullable(Type.String()),
    origin: StringEnum(REFUND_ORIGINS, 'API: refunded through this API; STRIPE_DASHBOARD: refunded in Stripe'),
    processorRefundId: Nullable(Type.String({ description: 'Stripe refund id (re_…); null unless from Stripe' })),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

const paymentFields = {
  id: Type.String({ description: 'pay_…' }),
  amount: Type.Number({ description: 'What was received' }),
  paymentDate: DateOnly(),
  method: StringEnum(PAYMENT_METHODS),
  createdAt: DateTime(),
  invoiceId: Type.String(),
  invoiceNumber: Type.String(),
  customerId: Type.String({ description: 'The invoice’s customer' }),
  reference: Nullable(Type.String({ description: 'Cheque number, transfer reference, …' })),
  status: StringEnum(PAYMENT_STATUSES, 'succeeded, then partially_refunded or refunded as refunds add up'),
  refundedAmount: Type.Number({ description: 'Sum of the refunds' }),
  unappliedAmount: Type.Number({
    description:
      'Money received that the invoice could not take (more than its balance, or a void invoice), not yet refunded; refunds take it first',
  }),
  origin: StringEnum(PAYMENT_ORIGINS, 'API: recorded through this API; STRIPE: from a Stripe payment_intent.succeeded'),
  processorPaymentId: Nullable(Type.String({ description: 'Stripe PaymentIntent id (pi_…); null unless Stripe' })),
};

export const Payment = Type.Object(paymentFields, {
  additionalProperties: false,
  examples: [
    {
      id: 'pay_01JDX7EJFGTYTPRQYVHCSATN93',
      amount: 150,
      paymentDate: '2026-05-03',
      method: 'check',
      createdAt: '2026-05-03T13:45:02.000Z',
      invoiceId: 'inv_01JDSE805A9PC85W11DRS12HVT',
      invoiceNumber: 'INV-000001',
      customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
      reference: 'Cheque 1042',
      status: 'succeeded',
      refundedAmount: 0,
      unappliedAmount: 0,
      origin: 'API',
      processorPaymentId: null,
    },
  ],
});
export const PaymentDetail = Type.Object(
  { ...paymentFields, refunds: Type.Array(Refund, { description: 'Oldest first' }) },
  {
    additionalProperties: false,
    examples: [
      {
        ...exampleOf(Payment),
        status: 'partially_refunded',
        refundedAmount: 20,
        refunds: [
          {
            id: 'rfd_01JDXB2M4QK8R1T5V7X9Z1B3D5',
            paymentId: 'pay_01JDX7EJFGTYTPRQYVHCSATN93',
            amount: 20,
            reason: 'One visit skipped for rain',
            origin: 'API',
            processorRefundId: null,
            createdAt: '2026-05-10T09:12:40.000Z',
          },
        ],
      },
    ],
  },
);

const Bound = (description: string) => Type.String({ minLength: 1, maxLength: 40, description });

export const PaymentListQuery = Type.Object({
  customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  invoiceId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  method: Type.Optional(StringEnum(PAYMENT_METHODS)),
  status: Type.Optional(StringEnum(PAYMENT_STATUSES)),
  from: Type.Optional(
    Bound('First paymentDate included: YYYY-MM-DD, or a date-time whose calendar date in the org timezone is used'),
  ),
  to: Type.Optional(Bound('Last paymentDate included (inclusive); same forms as from')),
  unapplied: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: 'true: only payments with money not applied to their invoice (unappliedAmount > 0); false: none',
    }),
  ),
  ...PageQuery,
});

export const RefundBody = Type.Object(
  {
    amount: Type.Optional(
      Money('Greater than 0, at most the refundable rest (amount − refundedAmount); default: that whole rest'),
    ),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const RefundResult = Type.Object(
  { refund: Refund, payment: PaymentDetail, invoice: InvoiceDetail },
  { additionalProperties: false },
);

export const PaymentListResponse = Envelope(Type.Array(Payment));
export const PaymentResponse = Envelope(PaymentDetail);
export const RefundResponse = Envelope(RefundResult);

export const StripeParams = Type.Object({ organizationId: Type.String({ minLength: 1, maxLength: 64 }) });
export const StripeAck = Type.Object(
  {
    received: Type.Literal(true),
    outcome: StringEnum(
      ['recorded', 'duplicate', 'ignored'],
      'recorded: something was written; duplicate: already recorded (a replay); ignored: an event type not handled',
    ),
  },
  { additionalProperties: false },
);
