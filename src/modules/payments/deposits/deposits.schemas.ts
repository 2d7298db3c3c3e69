import { Type } from 'typebox';
import { StringEnum } from '../../../platform/enum.js';
import { DateOnly, DateTime, Envelope, Money, Nullable, PageQuery } from '../../../platform/schemas.js';
import { PAYMENT_METHODS } from '../../invoices/invoices.schemas.js';
import { DEPOSIT_ORIGINS } from '../intents/payment-intents.states.js';
import { PAYMENT_ORIGINS } from '../payments.states.js';

export const Deposit = Type.Object(
  {
    id: Type.String({ description: 'dep_…' }),
    depositDate: DateOnly('The day the money reached the bank (a payout: its arrival date)'),
    reference: Nullable(Type.String({ description: 'Deposit slip number, bank reference, payout descriptor' })),
    amount: Type.Number({ description: 'What the bank received' }),
    origin: StringEnum(DEPOSIT_ORIGINS, 'MANUAL: a cash/check run of the office; STRIPE_PAYOUT: a Stripe payout.paid'),
    processorPayoutId: Nullable(Type.String({ description: 'Stripe Payout id (po_…); null unless a payout' })),
    paymentIds: Type.Array(Type.String(), { description: 'The payments the deposit holds' }),
    paymentsTotal: Type.Number({ description: 'What those payments brought in (less refunds made before deposit)' }),
    difference: Type.Number({
      description: 'amount − paymentsTotal: Stripe fees on a payout, a miscounted run; 0 when they agree',
    }),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export const CreateDepositBody = Type.Object(
  {
    depositDate: DateOnly('Not after today (organization timezone)'),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    paymentIds: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: 500,
      description: 'Cash and check payments (pay_…), each in no other deposit',
    }),
    amount: Type.Optional(
      Money("What the bank statement shows, when it differs from the payments' total; default: that total"),
    ),
  },
  { additionalProperties: false },
);

const Bound = (description: string) => Type.String({ minLength: 1, maxLength: 40, description });

export const DepositListQuery = Type.Object({
  origin: Type.Optional(StringEnum(DEPOSIT_ORIGINS)),
  from: Type.Optional(Bound('First depositDate included: YYYY-MM-DD, or a date-time (its date in the org timezone)')),
  to: Type.Optional(Bound('Last depositDate included; same forms as from')),
  ...PageQuery,
});

export const ReconciliationQuery = Type.Object(
  {
    from: Type.Optional(Bound('First day included (paymentDate, depositDate): YYYY-MM-DD or a date-time')),
    to: Type.Optional(Bound('Last day included; same forms as from')),
  },
  { additionalProperties: false },
);

export const UndepositedPayment = Type.Object(
  {
    id: Type.String({ description: 'pay_…' }),
    invoiceId: Type.String(),
    invoiceNumber: Type.String(),
    customerId: Type.String(),
    paymentDate: DateOnly(),
    method: StringEnum(PAYMENT_METHODS),
    origin: StringEnum(PAYMENT_ORIGINS),
    reference: Nullable(Type.String()),
    processorPaymentId: Nullable(Type.String()),
    amount: Type.Number({ description: 'What was received' }),
    undepositedAmount: Type.Number({ description: 'What still has to reach the bank: amount − refunded' }),
  },
  { additionalProperties: false },
);

export const Reconciliation = Type.Object(
  {
    from: Nullable(DateOnly()),
    to: Nullable(DateOnly()),
    undepositedPayments: Type.Array(UndepositedPayment, {
      description:
        'Cash and check payments and Stripe card payments no deposit holds, oldest first (at most 1000; undepositedCount counts them all)',
    }),
    undepositedCount: Type.Integer(),
    undepositedTotal: Type.Number(),
    deposits: Type.Array(Deposit, { description: 'Deposits of the period with their differences, oldest first' }),
    depositedTotal: Type.Number(),
    unmatchedPayouts: Type.Array(Deposit, {
      description: 'Payouts of the period holding no payment of this organization: to look at in Stripe',
    }),
  },
  { additionalProperties: false },
);

export const DepositResponse = Envelope(Deposit);
export const DepositListResponse = Envelope(Type.Array(Deposit));
export const ReconciliationResponse = Envelope(Reconciliation);
