import { type Static, Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, Money, Nullable, PageQuery } from '../../platform/schemas.js';
import { BillResponse } from '../bills/bills.schemas.js';
import { PO_STATUSES } from './purchase-orders.states.js';

const Ref = Type.String({ minLength: 1, maxLength: 64 });
const Notes = Type.String({ maxLength: 10_000 });

export const PoLineInput = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 1000 }),
    quantity: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1_000_000,
      description: 'Greater than 0, at most three decimals',
    }),
    unitCost: Money('Cost per unit, ≥ 0, at most two decimals'),
    equipmentId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The equipment this is for' })),
  },
  { additionalProperties: false },
);
const PoLinesInput = Type.Array(PoLineInput, { minItems: 1, maxItems: 200, description: 'At least one line' });

export const CreatePoBody = Type.Object(
  {
    vendorId: Ref,
    jobId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The job the materials are for' })),
    orderDate: Type.Optional(DateOnly('Default: today in the organization’s timezone')),
    expectedDate: Type.Optional(DateOnly('Expected delivery; not before orderDate')),
    lineItems: PoLinesInput,
    notes: Type.Optional(Notes),
  },
  { additionalProperties: false },
);
export type CreatePoInput = Static<typeof CreatePoBody>;

export const UpdatePoBody = Type.Object(
  {
    vendorId: Type.Optional(Ref),
    jobId: Type.Optional(Nullable(Ref)),
    orderDate: Type.Optional(DateOnly()),
    expectedDate: Type.Optional(Nullable(DateOnly())),
    lineItems: Type.Optional(PoLinesInput),
    notes: Type.Optional(Nullable(Notes)),
  },
  { additionalProperties: false, description: 'Partial; only a draft may change (else 409 INVALID_STATE)' },
);
export type UpdatePoInput = Static<typeof UpdatePoBody>;

const poFields = {
  id: Type.String({ description: 'po_…' }),
  poNumber: Type.String({ description: 'PO-000001 upwards, per organization, no gaps' }),
  vendorId: Type.String(),
  jobId: Nullable(Type.String()),
  status: StringEnum(PO_STATUSES),
  orderDate: DateOnly(),
  expectedDate: Nullable(DateOnly()),
  lineItems: Type.Array(
    Type.Object(
      {
        id: Type.String(),
        description: Type.String(),
        quantity: Type.Number(),
        unitCost: Type.Number(),
        amount: Type.Number({ description: 'round(quantity × unitCost), half away from zero' }),
        equipmentId: Nullable(Type.String()),
      },
      { additionalProperties: false },
    ),
  ),
  total: Type.Number(),
  notes: Nullable(Type.String()),
  billId: Nullable(Type.String({ description: 'The bill made from this order' })),
  sentAt: Nullable(DateTime()),
  receivedAt: Nullable(DateTime()),
  cancelledAt: Nullable(DateTime()),
  createdAt: DateTime(),
  updatedAt: DateTime(),
};

export const PurchaseOrder = Type.Object(poFields, {
  additionalProperties: false,
  examples: [
    {
      id: 'po_01JDNE2M3CBFM0B8JK14ANS28B',
      poNumber: 'PO-000001',
      vendorId: 'ven_01JDQ512TK6XX19Q7NGQ9EBD3Y',
      jobId: null,
      status: 'sent',
      orderDate: '2026-10-06',
      expectedDate: null,
      lineItems: [
        {
          id: 'pol_01JD554GSYH7QX1TR1DK3F8AGT',
          description: 'Hardwood mulch (yd)',
          quantity: 20,
          unitCost: 32.5,
          amount: 650,
          equipmentId: null,
        },
        {
          id: 'pol_01JDM9KDFC1RYX3R9JER4165R0',
          description: 'Ice melt, 50 lb bag',
          quantity: 40,
          unitCost: 18.75,
          amount: 750,
          equipmentId: null,
        },
      ],
      total: 1400,
      notes: null,
      billId: null,
      sentAt: '2026-10-06T14:18:25.000Z',
      receivedAt: null,
      cancelledAt: null,
      createdAt: '2026-10-06T14:18:25.000Z',
      updatedAt: '2026-10-06T14:18:25.000Z',
    },
  ],
});
export const SentPurchaseOrder = Type.Object(
  {
    ...poFields,
    emailedTo: Type.Array(Type.String(), { description: 'The vendor’s address, or empty when it has none' }),
  },
  { additionalProperties: false },
);

export const PoListQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(PO_STATUSES)),
    vendorId: Type.Optional(Ref),
    jobId: Type.Optional(Ref),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const PoResponse = Envelope(PurchaseOrder);
export const SentPoResponse = Envelope(SentPurchaseOrder);
export const PoList = Envelope(Type.Array(PurchaseOrder));
export { BillResponse };
