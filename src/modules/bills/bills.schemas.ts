import { type Static, Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, Money, Nullable, PageQuery } from '../../platform/schemas.js';
import { BILL_EXPENSE_ACCOUNTS } from '../ledger/ledger.accounts.js';
import { BILL_STATUSES } from './bills.states.js';

export const BillStatusSchema = StringEnum(BILL_STATUSES);

export const BillLineInput = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 1000 }),
    amount: Money('Greater than 0, at most two decimals'),
    accountCode: Type.Optional(
      StringEnum(
        BILL_EXPENSE_ACCOUNTS,
        `Expense account debited when posted (${BILL_EXPENSE_ACCOUNTS.join(', ')}); default 5000`,
      ),
    ),
  },
  { additionalProperties: false },
);

const BillLinesInput = Type.Array(BillLineInput, { minItems: 1, maxItems: 200, description: 'At least one line' });
const Notes = Type.String({ maxLength: 10_000 });
const Ref = Type.String({ minLength: 1, maxLength: 64 });

export const CreateBillBody = Type.Object(
  {
    vendorId: Ref,
    purchaseOrderId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'An order of the same vendor' }),
    ),
    vendorReference: Type.Optional(Type.String({ maxLength: 200, description: 'The vendor’s own invoice number' })),
    billDate: Type.Optional(DateOnly('Default: today in the organization’s timezone')),
    dueDate: Type.Optional(DateOnly('Default: billDate + the vendor’s payment terms; not before billDate')),
    lineItems: BillLinesInput,
    notes: Type.Optional(Notes),
    draft: Type.Optional(
      Type.Boolean({
        description:
          'true: keep it as a draft (POST /{id}/post later); default: posted at once (open, or awaiting_approval above settings billApprovalThreshold)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateBillInput = Static<typeof CreateBillBody>;

export const UpdateBillBody = Type.Object(
  {
    vendorId: Type.Optional(Ref),
    vendorReference: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    billDate: Type.Optional(DateOnly()),
    dueDate: Type.Optional(DateOnly()),
    lineItems: Type.Optional(BillLinesInput),
    notes: Type.Optional(Nullable(Notes)),
  },
  {
    additionalProperties: false,
    description:
      'Partial. Draft and awaiting_approval accept every field; later only dueDate and notes (else 409 INVALID_STATE).',
  },
);
export type UpdateBillInput = Static<typeof UpdateBillBody>;

export const BillLine = Type.Object(
  {
    id: Type.String(),
    description: Type.String(),
    amount: Type.Number(),
    accountCode: Type.String(),
  },
  { additionalProperties: false },
);

export const Bill = Type.Object(
  {
    id: Type.String({ description: 'bil_…' }),
    billNumber: Type.String({ description: 'BILL-000001 upwards, per organization, no gaps' }),
    vendorId: Type.String(),
    purchaseOrderId: Nullable(Type.String()),
    vendorReference: Nullable(Type.String()),
    status: BillStatusSchema,
    billDate: DateOnly(),
    dueDate: DateOnly(),
    lineItems: Type.Array(BillLine),
    total: Type.Number(),
    amountPaid: Type.Number({ description: 'Allocated by bill payments that have not failed' }),
    balance: Type.Number({ description: 'total − amountPaid; 0 once void' }),
    notes: Nullable(Type.String()),
    postedAt: Nullable(DateTime('When it was booked to Accounts Payable (open)')),
    approvedAt: Nullable(DateTime()),
    approvedBy: Nullable(Type.String({ description: 'The user or API key that approved it' })),
    voidedAt: Nullable(DateTime()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'bil_01JD8QJ4GNVMSEYRQ22DHPPK7F',
        billNumber: 'BILL-000001',
        vendorId: 'ven_01JDQ512TK6XX19Q7NGQ9EBD3Y',
        purchaseOrderId: 'po_01JDNE2M3CBFM0B8JK14ANS28B',
        vendorReference: null,
        status: 'open',
        billDate: '2026-10-09',
        dueDate: '2026-11-08',
        lineItems: [
          {
            id: 'bln_01JDKKENWVXE0MZ3H53Y2A0SB0',
            description: 'Hardwood mulch (yd) (20 × 32.50)',
            amount: 650,
            accountCode: '5000',
          },
          {
            id: 'bln_01JDXWS93NMP956TQ0CQEGNBJ9',
            description: 'Ice melt, 50 lb bag (40 × 18.75)',
            amount: 750,
            accountCode: '5000',
          },
        ],
        total: 1400,
        amountPaid: 0,
        balance: 1400,
        notes: 'From purchase order PO-000001',
        postedAt: '2026-10-09T16:41:03.000Z',
        approvedAt: null,
        approvedBy: null,
        voidedAt: null,
        createdAt: '2026-10-09T16:41:03.000Z',
        updatedAt: '2026-10-09T16:41:03.000Z',
      },
    ],
  },
);

export const BillListQuery = Type.Object(
  {
    status: Type.Optional(BillStatusSchema),
    vendorId: Type.Optional(Ref),
    purchaseOrderId: Type.Optional(Ref),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const BillResponse = Envelope(Bill);
export const BillList = Envelope(Type.Array(Bill));
