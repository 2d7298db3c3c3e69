import { Type } from 'typebox';
import { Nullable } from '../../platform/schemas.js';
import { LineItemsInput } from './line-items.js';

/*
 * The request fields every billing document has (a customer, an optional property of
 * theirs, lines, notes), written once; each resource adds its own dates and says in
 * its own words what its states allow.
 */

const Id = Type.String({ minLength: 1, maxLength: 64 });
const Notes = Type.String({ maxLength: 10_000 });

/** A new document's customer, property, lines and notes (`propertyDescription` documents the property). */
export const documentCreateFields = (propertyDescription?: string) => ({
  customerId: Id,
  propertyId: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, ...(propertyDescription ? { description: propertyDescription } : {}) }),
  ),
  lineItems: LineItemsInput,
});

/** Notes on a new document (after its dates in the schema). */
export const documentNotes = () => ({ notes: Type.Optional(Notes) });

/** The same fields in a partial update: all optional; propertyId and notes may be cleared with null. */
export const documentPatchFields = () => ({
  customerId: Type.Optional(Id),
  propertyId: Type.Optional(Nullable(Id)),
  lineItems: Type.Optional(LineItemsInput),
});

export const documentPatchNotes = () => ({ notes: Type.Optional(Nullable(Notes)) });

/** The lines of every create example. */
export const EXAMPLE_LINES = [
  { description: 'Weekly mowing', quantity: 4, unitPrice: 45, taxable: true },
  { description: 'Hedge trimming', quantity: 1.5, unitPrice: 60 },
];
