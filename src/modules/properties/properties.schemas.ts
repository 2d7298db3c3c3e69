import { type Static, Type } from 'typebox';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';

const Text = (maxLength: number, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });

const fields = {
  name: Type.Optional(Nullable(Text(200, 'A label such as "Front yard" or "Lake house"'))),
  street: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
  city: Type.Optional(Nullable(Text(100))),
  state: Type.Optional(Nullable(Text(100))),
  zip: Type.Optional(Nullable(Text(20))),
  accessNotes: Type.Optional(Nullable(Text(5_000, 'How crews get in: dogs, parking, side gate'))),
  gateCode: Type.Optional(Nullable(Text(50))),
  lotSize: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_000_000_000, description: 'Square feet' }))),
  lat: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90, description: 'Latitude, with lng' }))),
  lng: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180, description: 'Longitude, with lat' }))),
};

export const CreatePropertyBody = Type.Object(
  { customerId: Type.String({ minLength: 1, maxLength: 64, description: 'A live customer (cus_…)' }), ...fields },
  {
    additionalProperties: false,
    examples: [
      {
        customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        name: 'Front yard',
        street: '18 Maple Court',
        city: 'Springfield',
        state: 'IL',
        zip: '62704',
        accessNotes: 'Side gate; friendly dog',
        gateCode: '4512',
        lotSize: 8200,
      },
    ],
  },
);
export const UpdatePropertyBody = Type.Object(
  { ...fields, street: Type.Optional(fields.street) },
  { additionalProperties: false },
);
export type CreatePropertyInput = Static<typeof CreatePropertyBody>;
export type UpdatePropertyInput = Static<typeof UpdatePropertyBody>;

export const Property = Type.Object(
  {
    id: Type.String({ description: 'prp_…' }),
    customerId: Type.String(),
    name: Nullable(Type.String()),
    street: Type.String(),
    city: Nullable(Type.String()),
    state: Nullable(Type.String()),
    zip: Nullable(Type.String()),
    address: Type.String({ description: '"street, city, state zip" from the parts present' }),
    accessNotes: Nullable(Type.String()),
    gateCode: Nullable(Type.String()),
    lotSize: Nullable(Type.Integer({ description: 'Square feet' })),
    lat: Nullable(Type.Number()),
    lng: Nullable(Type.Number()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'prp_01JD8Q7A4C2E6G8J0L2N4Q6S8U',
        customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        name: 'Front yard',
        street: '18 Maple Court',
        city: 'Springfield',
        state: 'IL',
        zip: '62704',
        address: '18 Maple Court, Springfield, IL 62704',
        accessNotes: 'Side gate; friendly dog',
        gateCode: '4512',
        lotSize: 8200,
        lat: 39.7817,
        lng: -89.6501,
        createdAt: '2026-04-02T14:11:40.000Z',
        updatedAt: '2026-04-02T14:11:40.000Z',
      },
    ],
  },
);

export const PropertyListQuery = Type.Object(
  {
    customerId: Type.Optional(Type.String({ maxLength: 64, description: "Only this customer's properties" })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const PropertyResponse = Envelope(Property);
export const PropertyList = Envelope(Type.Array(Property));
