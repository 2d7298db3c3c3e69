import { Type } from 'typebox';
import { CalendarDateIn } from '../../platform/calendar-date.js';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, exampleOf, Money, Nullable, PageQuery } from '../../platform/schemas.js';
import { LastEmail } from '../mail/mail.schemas.js';
import { CONTRACT_STATUSES } from './contracts.states.js';

const IdString = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const ContractStatusSchema = StringEnum(CONTRACT_STATUSES);

export const ContractLineIn = Type.Object(
  {
    description: Type.String({ minLength: 1, maxLength: 500, pattern: '\\S' }),
    unitPrice: Money('Price per unit, ≥ 0, at most two decimals'),
    quantity: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000, description: 'Default 1; > 0, up to 3 decimals' }),
    ),
  },
  { additionalProperties: false },
);

export const ContractLine = Type.Object(
  {
    description: Type.String(),
    unitPrice: Type.Number(),
    quantity: Type.Number(),
    amount: Type.Number({ description: 'round(quantity × unitPrice) to the cent, half away from zero' }),
  },
  { additionalProperties: false },
);

const ServicesIn = Type.Array(ContractLineIn, {
  maxItems: 200,
  description: 'Line items; totalValue = Σ line amounts (no tax: a contract states the agreed value)',
});

export const Contract = Type.Object(
  {
    id: Type.String({ description: 'con_…' }),
    title: Type.String(),
    customerId: Type.String(),
    propertyId: Nullable(Type.String()),
    templateId: Nullable(Type.String({ description: 'The template the content was made from' })),
    amendsContractId: Nullable(
      Type.String({
        description:
          'For an amendment: the signed or active contract it amends (see POST /api/contracts/{id}/amendments); null otherwise',
      }),
    ),
    status: ContractStatusSchema,
    startDate: Nullable(DateOnly()),
    endDate: Nullable(DateOnly()),
    totalValue: Type.Number({ description: 'Σ of the services’ line amounts' }),
    services: Type.Array(ContractLine),
    terms: Nullable(Type.String()),
    sentAt: Nullable(DateTime('First time it was sent for signature')),
    signedAt: Nullable(DateTime()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'con_01JDJH1F2408NVRK9AKCD2T2ZH',
        title: '2026 lawn care season',
        customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        propertyId: 'prp_01JD8Q7A4C2E6G8J0L2N4Q6S8U',
        templateId: null,
        amendsContractId: null,
        status: 'draft',
        startDate: '2026-04-01',
        endDate: '2026-10-31',
        totalValue: 1350,
        services: [{ description: 'Weekly mowing, April to October', unitPrice: 45, quantity: 30, amount: 1350 }],
        terms: 'Billed monthly; 14 days to pay.',
        sentAt: null,
        signedAt: null,
        createdAt: '2026-03-20T10:05:51.000Z',
        updatedAt: '2026-03-20T10:05:51.000Z',
      },
    ],
  },
);

export const ContractActivityEntry = Type.Object(
  {
    id: Type.String(),
    type: Type.String({
      description:
        'created | updated | sent | viewed | signed | activated | expired | canceled | amended (an amendment was created; the description names it) | amendment_signed (an amendment of this contract was signed)',
    }),
    description: Type.String(),
    actorId: Nullable(Type.String({ description: 'User or API key id; null for the customer and the system' })),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export const Signature = Type.Object(
  {
    signerName: Type.String(),
    signedAt: DateTime(),
    ipAddress: Type.String({ description: 'Address the signature came from' }),
    userAgent: Type.String(),
    contentSha256: Type.String({ description: 'SHA-256 (hex) of `content` as signed' }),
  },
  { additionalProperties: false, description: 'Evidence of the customer’s signature' },
);

export const AmendmentRef = Type.Object(
  {
    id: Type.String({ description: 'The amendment (a contract, con_…)' }),
    status: ContractStatusSchema,
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export const ContractDetail = Type.Object(
  {
    ...Contract.properties,
    content: Type.String({ description: 'The full text: the filled template followed by the terms' }),
    signature: Nullable(Signature),
    amendments: Type.Array(AmendmentRef, { description: 'Amendments made to this contract, oldest first' }),
    activity: Type.Array(ContractActivityEntry, { description: 'Chronological' }),
    lastEmail: LastEmail,
  },
  {
    additionalProperties: false,
    examples: [
      {
        ...exampleOf(Contract),
        content:
          'Lawn care agreement between Greenway Landscaping and Dana Whitfield for 2026.\n\nBilled monthly; 14 days to pay.',
        signature: null,
        amendments: [],
        activity: [
          {
            id: 'cac_01JDJH1F3519PWSLAB2DE3U3ZJ',
            type: 'created',
            description: 'Contract created',
            actorId: 'usr_01JD8PZ3K6F1QW2E8R4T5Y7U9I',
            createdAt: '2026-03-20T10:05:51.000Z',
          },
        ],
        lastEmail: null,
      },
    ],
  },
);

export const SentContract = Type.Object(
  {
    ...ContractDetail.properties,
    portalUrl: Type.String({ description: 'The customer’s signing link (also emailed)' }),
  },
  { additionalProperties: false },
);

export const CreateContractBody = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 300, pattern: '\\S' }),
    customerId: IdString('The customer (required)'),
    propertyId: Type.Optional(IdString('A property of that customer')),
    templateId: Type.Optional(IdString('Contract template whose body becomes the content')),
    startDate: Type.Optional(CalendarDateIn()),
    endDate: Type.Optional(CalendarDateIn('Not before startDate')),
    services: Type.Optional(ServicesIn),
    terms: Type.Optional(Type.String({ maxLength: 100_000, description: 'Appended to the content' })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        title: '2026 lawn care season',
        customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
        startDate: '2026-04-01',
        endDate: '2026-10-31',
        services: [{ description: 'Weekly mowing, April to October', unitPrice: 45, quantity: 30 }],
        terms: 'Billed monthly; 14 days to pay.',
      },
    ],
  },
);

export const UpdateContractBody = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 300, pattern: '\\S' })),
    propertyId: Type.Optional(Nullable(IdString('A property of the contract’s customer'))),
    startDate: Type.Optional(Nullable(CalendarDateIn('null clears it'))),
    endDate: Type.Optional(Nullable(CalendarDateIn('Not before startDate; null clears it'))),
    services: Type.Optional(ServicesIn),
    terms: Type.Optional(Nullable(Type.String({ maxLength: 100_000 }))),
  },
  {
    additionalProperties: false,
    description: 'Partial update, drafts only (else 409 INVALID_STATE); the content is filled again',
  },
);

export const AmendContractBody = Type.Object(UpdateContractBody.properties, {
  additionalProperties: false,
  description:
    'Optional overrides of the original’s fields (title, propertyId, startDate, endDate, services, terms; null clears a nullable one). Everything else — customer, template text — comes from the original. The content is filled again.',
});

export const ContractListQuery = Type.Object(
  {
    status: Type.Optional(ContractStatusSchema),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const ActivityParams = Type.Object({ contract_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ActivityListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

const counts = Object.fromEntries(CONTRACT_STATUSES.map((s) => [s, Type.Integer({ minimum: 0 })]));

export const ContractAnalytics = Type.Object(
  {
    totalContracts: Type.Integer({ description: 'Every contract of the organization, any status' }),
    byStatus: Type.Object(counts, {
      additionalProperties: false,
      description: 'Count per status; every status is present, 0 when none',
    }),
    signingRate: Nullable(
      Type.Number({
        description:
          'Of the contracts ever sent for signature (sentAt set, whatever their status now, canceled included), the fraction the customer signed (signedAt set): 0..1, 4 decimals. null when none was ever sent.',
      }),
    ),
    averageHoursToSign: Nullable(
      Type.Number({
        description: 'Mean hours from first send to signature over signed contracts, 2 decimals; null when none',
      }),
    ),
    activeRevenue: Type.Number({ description: 'Σ totalValue of contracts now active; 0 when none' }),
  },
  { additionalProperties: false },
);

export const ContractDetailResponse = Envelope(ContractDetail);
export const SentContractResponse = Envelope(SentContract);
export const ContractListResponse = Envelope(Type.Array(Contract));
export const ContractActivityResponse = Envelope(Type.Array(ContractActivityEntry));
export const ContractAnalyticsResponse = Envelope(ContractAnalytics);
