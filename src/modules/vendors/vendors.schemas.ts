import { type Static, Type } from 'typebox';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';

const Text = (maxLength: number, description?: string) =>
  Nullable(Type.String({ maxLength, ...(description ? { description } : {}) }));

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'e.g. "Green Valley Mulch"' }),
  email: Type.Optional(
    Nullable(Type.String({ format: 'email', maxLength: 254, description: 'Purchase orders are mailed here on send' })),
  ),
  phone: Type.Optional(Text(50)),
  address: Type.Optional(Text(500)),
  paymentTermsDays: Type.Optional(
    Nullable(
      Type.Integer({
        minimum: 0,
        maximum: 365,
        description: 'Days from billDate to dueDate; null = the organization’s paymentTermsDays',
      }),
    ),
  ),
  notes: Type.Optional(Text(10_000)),
  active: Type.Optional(Type.Boolean({ description: 'Inactive vendors take no new orders, bills or payments' })),
};

export const CreateVendorBody = Type.Object(fields, { additionalProperties: false });
export const UpdateVendorBody = Type.Object(
  { ...fields, name: Type.Optional(fields.name) },
  { additionalProperties: false },
);
export type CreateVendorInput = Static<typeof CreateVendorBody>;
export type UpdateVendorInput = Static<typeof UpdateVendorBody>;

export const Vendor = Type.Object(
  {
    id: Type.String({ description: 'ven_…' }),
    name: Type.String(),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    address: Nullable(Type.String()),
    paymentTermsDays: Type.Integer({ description: 'Effective terms (the vendor’s own, else the organization’s)' }),
    customPaymentTerms: Type.Boolean({ description: 'Whether the vendor has its own terms' }),
    notes: Nullable(Type.String()),
    active: Type.Boolean(),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'ven_01JDQ512TK6XX19Q7NGQ9EBD3Y',
        name: 'Prairie Mulch & Stone',
        email: 'orders@prairiemulch.example',
        phone: '+1 555 0187',
        address: null,
        paymentTermsDays: 30,
        customPaymentTerms: true,
        notes: null,
        active: true,
        createdAt: '2026-01-12T15:40:00.000Z',
        updatedAt: '2026-01-12T15:40:00.000Z',
      },
    ],
  },
);

export const VendorListQuery = Type.Object(
  {
    active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) vendors' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const VendorResponse = Envelope(Vendor);
export const VendorList = Envelope(Type.Array(Vendor));
