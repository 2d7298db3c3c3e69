import { type Static, Type } from 'typebox';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';
import { CUSTOMER_STATUSES } from './customers.states.js';

export const CUSTOMER_TYPES = ['INDIVIDUAL', 'BUSINESS', 'PROPERTY_MANAGER', 'HOA', 'OTHER'] as const;
export type CustomerType = (typeof CUSTOMER_TYPES)[number];

const Text = (maxLength: number, description?: string) =>
  Type.String({ maxLength, ...(description ? { description } : {}) });
const Email = (description?: string) =>
  Type.String({ format: 'email', maxLength: 254, ...(description ? { description } : {}) });

const CustomerTypeSchema = Type.Enum(CUSTOMER_TYPES, {
  description: 'INDIVIDUAL (default), BUSINESS, PROPERTY_MANAGER, HOA or OTHER',
});
const StatusSchema = Type.Enum(CUSTOMER_STATUSES, { description: 'active or inactive (deactivate/reactivate)' });

const FirstName = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '\\S',
  description:
    'The canonical name slot: the first name of an individual, or the whole name of a business, HOA or property manager',
});

/** Create fields (spec 2.1 plus tags and taxExempt). */
const createFields = {
  firstName: FirstName,
  lastName: Type.Optional(Nullable(Text(100, 'Surname, for individuals'))),
  company: Type.Optional(Nullable(Text(200, 'Company name'))),
  customerType: Type.Optional(CustomerTypeSchema),
  email: Type.Optional(Nullable(Email('Primary email; receives documents'))),
  additionalEmails: Type.Optional(
    Type.Array(Email(), {
      maxItems: 10,
      uniqueItems: true,
      description: 'Extra addresses that also receive documents',
    }),
  ),
  phone: Type.Optional(Nullable(Text(40))),
  secondaryPhone: Type.Optional(Nullable(Text(40, 'Second contact number'))),
  billingAddress: Type.Optional(Nullable(Text(200, 'Street only'))),
  billingCity: Type.Optional(Nullable(Text(100))),
  billingState: Type.Optional(Nullable(Text(100))),
  billingZip: Type.Optional(Nullable(Text(20))),
  notes: Type.Optional(Nullable(Text(10_000, 'Internal notes'))),
  tags: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 50, pattern: '\\S' }), {
      maxItems: 50,
      description: 'Tag names (duplicates are dropped); the list filter `tag` matches one exactly',
    }),
  ),
  taxExempt: Type.Optional(
    Type.Boolean({ description: "When true, this customer's documents carry no tax; default false" }),
  ),
};

export const CreateCustomerBody = Type.Object(createFields, {
  additionalProperties: false,
  examples: [
    {
      firstName: 'Dana',
      lastName: 'Whitfield',
      email: 'dana.whitfield@example.com',
      phone: '+1 555 0142',
      billingAddress: '18 Maple Court',
      billingCity: 'Springfield',
      billingState: 'IL',
      billingZip: '62704',
      tags: ['weekly-mow'],
    },
  ],
});

/** Any create field; `null` clears an optional one. */
export const UpdateCustomerBody = Type.Object(
  { ...createFields, firstName: Type.Optional(FirstName) },
  { additionalProperties: false },
);
export type CreateCustomerInput = Static<typeof CreateCustomerBody>;
export type UpdateCustomerInput = Static<typeof UpdateCustomerBody>;

export const SMS_CONSENT_STATUSES = ['unknown', 'opted_in', 'opted_out'] as const;
export type SmsConsentStatus = (typeof SMS_CONSENT_STATUSES)[number];
export const SMS_CONSENT_SOURCES = ['staff', 'portal', 'keyword', 'request_form'] as const;
export type SmsConsentSource = (typeof SMS_CONSENT_SOURCES)[number];

const SmsConsent = Type.Object(
  {
    status: Type.Enum([...SMS_CONSENT_STATUSES], {
      description: 'Nothing is ever texted unless opted_in (operations.md §10)',
    }),
    updatedAt: Nullable(DateTime()),
    source: Nullable(Type.Enum([...SMS_CONSENT_SOURCES])),
  },
  { additionalProperties: false, description: 'Read-only: the latest of GET /api/customers/{id}/sms-consent' },
);

/** One change of a customer's SMS consent (GET /api/customers/{id}/sms-consent). */
export const SmsConsentChange = Type.Object(
  {
    status: Type.Enum(['opted_in', 'opted_out']),
    source: Type.Enum([...SMS_CONSENT_SOURCES], {
      description:
        'staff (POST …/sms-consent), portal, keyword (STOP/START texted back, or Twilio error 21610), request_form',
    }),
    evidence: Nullable(Type.String()),
    at: DateTime(),
  },
  { additionalProperties: false },
);

export const RecordSmsConsentBody = Type.Object(
  {
    optedIn: Type.Boolean({ description: 'true: the customer agreed to texts; false: they asked not to be texted' }),
    evidence: Type.Optional(
      Nullable(
        Type.String({ maxLength: 1000, description: 'How it was collected: "signed service agreement 2026-04-02"' }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type RecordSmsConsentInput = Static<typeof RecordSmsConsentBody>;

export const Customer = Type.Object(
  {
    id: Type.String({ description: 'cus_…' }),
    name: Type.String({ description: 'firstName + " " + lastName, trimmed' }),
    firstName: Type.String(),
    lastName: Nullable(Type.String()),
    company: Nullable(Type.String()),
    customerType: CustomerTypeSchema,
    email: Nullable(Type.String()),
    additionalEmails: Type.Array(Type.String()),
    phone: Nullable(Type.String()),
    secondaryPhone: Nullable(Type.String()),
    address: Type.String({ description: '"street, city, state zip" from the billing parts present ("" when none)' }),
    billingAddress: Nullable(Type.String()),
    billingCity: Nullable(Type.String()),
    billingState: Nullable(Type.String()),
    billingZip: Nullable(Type.String()),
    notes: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    taxExempt: Type.Boolean(),
    status: StatusSchema,
    phoneE164: Nullable(
      Type.String({
        description:
          'Read-only: `phone` in E.164, read with the organization’s `country` setting; null when it is not a valid number (no text can be sent)',
      }),
    ),
    smsConsent: SmsConsent,
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        name: 'Dana Whitfield',
        firstName: 'Dana',
        lastName: 'Whitfield',
        company: null,
        customerType: 'INDIVIDUAL',
        email: 'dana.whitfield@example.com',
        additionalEmails: [],
        phone: '+1 555 0142',
        secondaryPhone: null,
        address: '18 Maple Court, Springfield, IL 62704',
        billingAddress: '18 Maple Court',
        billingCity: 'Springfield',
        billingState: 'IL',
        billingZip: '62704',
        notes: null,
        tags: ['weekly-mow'],
        taxExempt: false,
        status: 'active',
        phoneE164: null,
        smsConsent: { status: 'unknown', updatedAt: null, source: null },
        createdAt: '2026-04-02T14:05:09.000Z',
        updatedAt: '2026-04-02T14:05:09.000Z',
      },
    ],
  },
);

export const CustomerListQuery = Type.Object(
  {
    search: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'Case-insensitive substring of the name, email or phone; a phone-like term also matches by digits ("(555) 010" finds 5550102000)',
      }),
    ),
    tag: Type.Optional(Type.String({ maxLength: 50, description: 'Only customers carrying this tag (exact)' })),
    status: Type.Optional(Type.Enum(CUSTOMER_STATUSES, { description: 'Only active or only inactive customers' })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const CustomerResponse = Envelope(Customer);
export const CustomerList = Envelope(Type.Array(Customer));
