import { type TSchema, Type } from 'typebox';
import { Nullable } from '../../platform/schemas.js';
import { LineItemsInput } from './line-items.js';

/*
 * The request bodies of every billing document: a customer, an optional property of
 * theirs, lines, the resource's own dates, notes. Each resource gives its dates, its
 * example and, in its own words, what its states allow.
 */

const Id = Type.String({ minLength: 1, maxLength: 64 });
const Notes = Type.String({ maxLength: 10_000 });

/** The lines of every create example. */
const EXAMPLE_LINES = [
  { description: 'Weekly mowing', quantity: 4, unitPrice: 45, taxable: true },
  { description: 'Hedge trimming', quantity: 1.5, unitPrice: 60 },
];

/** A create body: the common fields around `dates`; `example` gives its dates and notes. */
export const createDocumentBody = <D extends Record<string, TSchema>>(
  dates: D,
  example: Record<string, string>,
  propertyDescription?: string,
) =>
  Type.Object(
    {
      customerId: Id,
      propertyId: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 64,
          ...(propertyDescription ? { description: propertyDescription } : {}),
        }),
      ),
      lineItems: LineItemsInput,
      ...dates,
      notes: Type.Optional(Notes),
    },
    {
      additionalProperties: false,
      examples: [{ customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA', lineItems: EXAMPLE_LINES, ...example }],
    },
  );

/** A partial update body: every field optional, propertyId and notes clearable with null. */
export const updateDocumentBody = <D extends Record<string, TSchema>>(dates: D, description: string) =>
  Type.Object(
    {
      customerId: Type.Optional(Id),
      propertyId: Type.Optional(Nullable(Id)),
      lineItems: Type.Optional(LineItemsInput),
      ...dates,
      notes: Type.Optional(Nullable(Notes)),
    },
    { additionalProperties: false, description },
  );
