import { type Static, Type } from 'typebox';
import { DateOnly, DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';
import { REQUEST_STATUSES } from './requests.states.js';

/*
 * Requests from the public (operations.md §12). The public body is what the booking form and a
 * business's own site send; the staff side reads and moves requests.
 */

const Line = (maxLength: number, description: string) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', description });

export const PREFERRED_TIMES = ['morning', 'afternoon', 'any'] as const;

/** The words next to the form's SMS box: stored with the request as the consent's evidence. */
export const SMS_CONSENT_WORDING =
  'Yes, text me about this request and my appointments. Message and data rates may apply. Reply STOP to opt out.';

export const PublicRequestBody = Type.Object(
  {
    firstName: Line(100, 'Required'),
    lastName: Type.Optional(Type.String({ maxLength: 100 })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: 'Email or phone is required' })),
    phone: Type.Optional(
      Type.String({
        maxLength: 40,
        pattern: '^[0-9+()./ -]*$',
        description: 'Digits, spaces and + ( ) . / -; email or phone is required',
      }),
    ),
    address: Type.Object(
      {
        street: Line(200, 'Where the work is'),
        city: Line(100, 'City'),
        state: Type.Optional(Type.String({ maxLength: 50 })),
        zip: Type.Optional(Type.String({ maxLength: 20 })),
      },
      { additionalProperties: false },
    ),
    serviceIds: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 20,
        uniqueItems: true,
        description: 'Bookable services of this organization (GET /book/{slug} lists them)',
      }),
    ),
    description: Type.String({ minLength: 1, maxLength: 2000, pattern: '\\S', description: 'What is needed' }),
    preferredDates: Type.Optional(
      Type.Array(DateOnly('Today or later, in the organization’s timezone'), { maxItems: 3, uniqueItems: true }),
    ),
    preferredTime: Type.Optional(Type.Enum(PREFERRED_TIMES, { description: 'Default any' })),
    smsConsent: Type.Optional(
      Type.Boolean({ description: `The box "${SMS_CONSENT_WORDING}"; true records the consent with its evidence` }),
    ),
    altcha: Type.String({
      minLength: 1,
      maxLength: 8000,
      description:
        'The ALTCHA widget’s payload (base64 of its JSON) for a challenge from GET /api/public/{slug}/challenge; each is accepted once, within 10 minutes',
    }),
    website: Type.Optional(
      Type.String({
        maxLength: 500,
        description: 'Leave empty: a field people never see (a bot that fills it gets 201 and nothing is stored)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PublicRequestInput = Static<typeof PublicRequestBody>;

export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 64 }) });

export const PublicRequestCreated = Envelope(
  Type.Object(
    { id: Type.String({ description: 'req_…' }), status: Type.Literal('new') },
    { additionalProperties: false },
  ),
);

/** What GET /api/public/{slug}/challenge answers: an ALTCHA v2 challenge, as the widget's `challenge` URL expects. */
export const AltchaChallenge = Type.Object(
  {
    parameters: Type.Object(
      {},
      { additionalProperties: true, description: 'algorithm, nonce, salt, cost, keyPrefix, …' },
    ),
    signature: Type.String(),
  },
  { additionalProperties: false },
);

export const Request = Type.Object(
  {
    id: Type.String({ description: 'req_…' }),
    status: Type.Enum(REQUEST_STATUSES),
    firstName: Type.String(),
    lastName: Nullable(Type.String()),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    address: Type.Object(
      { street: Type.String(), city: Type.String(), state: Nullable(Type.String()), zip: Nullable(Type.String()) },
      { additionalProperties: false },
    ),
    serviceIds: Type.Array(Type.String()),
    description: Type.String(),
    preferredDates: Type.Array(DateOnly()),
    preferredTime: Type.Enum(PREFERRED_TIMES),
    smsConsent: Type.Boolean(),
    smsConsentEvidence: Nullable(
      Type.Object(
        {
          at: DateTime('When the form was sent'),
          ip: Type.String({ description: 'The address it came from' }),
          wording: Type.String({ description: 'The box’s exact words' }),
        },
        { additionalProperties: false },
      ),
    ),
    customerId: Nullable(Type.String({ description: 'Set when converted' })),
    estimateId: Nullable(Type.String()),
    jobId: Nullable(Type.String()),
    declineReason: Nullable(Type.String()),
    convertedAt: Nullable(DateTime()),
    declinedAt: Nullable(DateTime()),
    archivedAt: Nullable(DateTime()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const RequestDetail = Type.Object(
  {
    ...Request.properties,
    duplicateOf: Nullable(
      Type.String({ description: 'An earlier request (last 30 days) from the same email or phone, the latest' }),
    ),
    matchedCustomerId: Nullable(Type.String({ description: 'An existing customer with this email or phone' })),
  },
  { additionalProperties: false },
);

export const RequestListQuery = Type.Object(
  { status: Type.Optional(Type.Enum(REQUEST_STATUSES)), ...PageQuery },
  { additionalProperties: false },
);

export const ConvertRequestBody = Type.Object(
  {
    to: Type.Enum(['estimate', 'job'] as const),
    customerId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'Else the matched customer, else a new one' }),
    ),
    scheduledDate: Type.Optional(DateOnly('The job’s date (to: job); default the first preferred date, else today')),
  },
  { additionalProperties: false },
);
export type ConvertRequestInput = Static<typeof ConvertRequestBody>;

export const DeclineRequestBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);

export const RequestResponse = Envelope(RequestDetail);
export const RequestList = Envelope(Type.Array(Request));
