import { type Static, Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, Money, Nullable, PageQuery } from '../../platform/schemas.js';
import { BILL_PAYMENT_STATUSES } from './bill-payments.states.js';

export const BILL_PAYMENT_METHODS = ['check', 'ach', 'card', 'cash', 'other'] as const;
export type BillPaymentMethod = (typeof BILL_PAYMENT_METHODS)[number];

const Ref = Type.String({ minLength: 1, maxLength: 64 });

export const CreateBillPaymentBody = Type.Object(
  {
    vendorId: Ref,
    method: StringEnum(BILL_PAYMENT_METHODS),
    paymentDate: Type.Optional(
      DateOnly(
        'Default: today (organization timezone). After today → scheduled; the worker makes it pending on that day',
      ),
    ),
    reference: Type.Optional(Type.String({ maxLength: 200, description: 'Check number, ACH trace, …' })),
    allocations: Type.Array(
      Type.Object(
        {
          billId: Type.String({
            minLength: 1,
            maxLength: 64,
            description: 'An open or partially paid bill of the vendor',
          }),
          amount: Money('Greater than 0 and at most the bill’s balance'),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100, description: 'One entry per bill, each bill at most once' },
    ),
  },
  { additionalProperties: false },
);
export type CreateBillPaymentInput = Static<typeof CreateBillPaymentBody>;

export const FailBillPaymentBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 1000, description: 'Why the bank failed or returned it' }) },
  { additionalProperties: false },
);

export const BillPayment = Type.Object(
  {
    id: Type.String({ description: 'bpy_…' }),
    vendorId: Type.String(),
    method: StringEnum(BILL_PAYMENT_METHODS),
    paymentDate: DateOnly(),
    reference: Nullable(Type.String()),
    status: StringEnum(BILL_PAYMENT_STATUSES),
    amount: Type.Number({ description: 'Sum of the allocations' }),
    allocations: Type.Array(
      Type.Object(
        { billId: Type.String(), billNumber: Type.String(), amount: Type.Number() },
        { additionalProperties: false },
      ),
    ),
    failureReason: Nullable(Type.String()),
    settledAt: Nullable(DateTime()),
    failedAt: Nullable(DateTime()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const BillPaymentListQuery = Type.Object(
  {
    vendorId: Type.Optional(Ref),
    status: Type.Optional(StringEnum(BILL_PAYMENT_STATUSES)),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const BillPaymentResponse = Envelope(BillPayment);
export const BillPaymentList = Envelope(Type.Array(BillPayment));
