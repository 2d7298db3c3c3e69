import { type Static, Type } from 'typebox';
import { DateTime, Envelope, Money, Nullable, PageQuery } from '../../platform/schemas.js';

export const SERVICE_UNITS = ['each', 'hour', 'visit', 'sqft', 'acre', 'yard', 'month', 'other'] as const;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'e.g. "Weekly mowing"' }),
  description: Type.Optional(Nullable(Type.String({ maxLength: 5_000, description: 'Default line item description' }))),
  unit: Type.Optional(Type.Enum(SERVICE_UNITS, { description: 'What unitPrice is per; default each' })),
  unitPrice: Money('Default price per unit, at most two decimals'),
  taxable: Type.Optional(Type.Boolean({ description: 'Default true; copied onto line items' })),
  active: Type.Optional(
    Type.Boolean({ description: 'Inactive services stay on old documents but are hidden from pickers; default true' }),
  ),
  bookable: Type.Optional(
    Type.Boolean({
      description: 'Offered on the public booking form (GET /book/{bookingSlug}) when also active; default false',
    }),
  ),
};

export const CreateServiceBody = Type.Object(fields, { additionalProperties: false });
export const UpdateServiceBody = Type.Object(
  { ...fields, name: Type.Optional(fields.name), unitPrice: Type.Optional(fields.unitPrice) },
  { additionalProperties: false },
);
export type CreateServiceInput = Static<typeof CreateServiceBody>;
export type UpdateServiceInput = Static<typeof UpdateServiceBody>;

export const Service = Type.Object(
  {
    id: Type.String({ description: 'svc_…' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    unit: Type.Enum(SERVICE_UNITS),
    unitPrice: Type.Number({ description: 'Two decimals at most' }),
    taxable: Type.Boolean(),
    active: Type.Boolean(),
    bookable: Type.Boolean(),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const ServiceListQuery = Type.Object(
  {
    active: Type.Optional(Type.Boolean({ description: 'Only active (true) or inactive (false) services' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const ServiceResponse = Envelope(Service);
export const ServiceList = Envelope(Type.Array(Service));
