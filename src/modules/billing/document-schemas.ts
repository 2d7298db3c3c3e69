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

/**
 * The body of a send (`POST /api/invoices/{id}/send`, estimates' too): which channels carry the
 * portal link; no body, or no `channels`, is `["email"]` (operations.md §10).
 */
export const SendDocumentBody = Nullable(
  Type.Object(
    {
      channels: Type.Optional(
        Type.Array(Type.Enum(['email', 'sms']), {
          minItems: 1,
          maxItems: 2,
          uniqueItems: true,
          description:
            'How the link reaches the customer: "email" (the mail with the PDF), "sms" (a text with the link, through the messages outbox), or both. Default ["email"]. With "sms", a customer who cannot be texted (no smsConsent opted_in, no valid phoneE164, texting off or Twilio not configured) → 409 INVALID_STATE naming what is missing, and nothing is sent or written, no mail either.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);

/** What a send answers about its text (both null when `sms` was not asked for). */
export const sentTextFields = {
  textedTo: Nullable(Type.String({ description: 'The number texted (E.164), when channels held "sms"' })),
  textMessageId: Nullable(
    Type.String({ description: 'The text queued (msg_…, GET /api/messages/{id}), when channels held "sms"' }),
  ),
};
