import { Type } from 'typebox';
import { CalendarDateIn } from '../../platform/calendar-date.js';
import { EnumList, StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';
import { createDocumentBody, sentTextFields, updateDocumentBody } from '../billing/document-schemas.js';
import { LineItem } from '../billing/line-items.js';
import { InvoiceDetail } from '../invoices/invoices.schemas.js';
import { JobDetail, StartTime } from '../jobs/jobs.schemas.js';
import { LastEmail } from '../mail/mail.schemas.js';
import { ExpandedFields, ExpandQuery } from '../properties/properties.expand.js';
import { ESTIMATE_STATUSES } from './estimates.transitions.js';

export const EstimateStatusSchema = StringEnum(ESTIMATE_STATUSES);

const estimateFields = {
  id: Type.String({ description: 'est_…' }),
  estimateNumber: Type.String({ description: 'EST-000001 upwards, per organization, no gaps' }),
  customerId: Type.String(),
  propertyId: Nullable(Type.String()),
  status: EstimateStatusSchema,
  lineItems: Type.Array(LineItem),
  subtotal: Type.Number(),
  taxRate: Type.Number({ description: 'Percent applied (0 for a tax-exempt customer)' }),
  tax: Type.Number(),
  total: Type.Number(),
  estimateDate: DateOnly(),
  expirationDate: DateOnly(),
  notes: Nullable(Type.String({ description: 'Shown to the customer on the estimate' })),
  invoiceId: Nullable(Type.String({ description: 'The invoice created by converting this estimate' })),
  jobId: Nullable(Type.String({ description: 'The job made from this estimate by POST /convert-to-job' })),
  sentAt: Nullable(DateTime()),
  viewedAt: Nullable(DateTime('First time the customer opened the link')),
  approvedAt: Nullable(DateTime()),
  declinedAt: Nullable(DateTime()),
  lastEmail: LastEmail,
  createdAt: DateTime(),
  updatedAt: DateTime(),
  ...ExpandedFields,
};

export const Estimate = Type.Object(estimateFields, {
  additionalProperties: false,
  examples: [
    {
      id: 'est_01JDT1J87807AWMNTTJAY9FFJC',
      estimateNumber: 'EST-000001',
      customerId: 'cus_01JD8Q5M2XH7Z4W9K3T6R1B0NA',
      propertyId: null,
      status: 'sent',
      lineItems: [
        {
          id: 'lin_01JDBEC0MPVP0V17H59EY5VGBN',
          serviceId: null,
          description: 'Spring clean-up',
          quantity: 1,
          unitPrice: 180,
          taxable: true,
          amount: 180,
        },
        {
          id: 'lin_01JD15E9GNXN7VKD4PZ55GA20F',
          serviceId: null,
          description: 'Mulch install (yd)',
          quantity: 3,
          unitPrice: 65,
          taxable: true,
          amount: 195,
        },
      ],
      subtotal: 375,
      taxRate: 8.25,
      tax: 30.94,
      total: 405.94,
      estimateDate: '2026-03-15',
      expirationDate: '2026-04-14',
      notes: 'Spring clean-up and fresh mulch',
      invoiceId: null,
      jobId: null,
      sentAt: '2026-03-15T15:20:33.000Z',
      viewedAt: null,
      approvedAt: null,
      declinedAt: null,
      lastEmail: {
        status: 'sent',
        to: ['dana.whitfield@example.com'],
        sentAt: '2026-03-15T15:20:33.000Z',
        error: null,
      },
      createdAt: '2026-03-15T15:20:33.000Z',
      updatedAt: '2026-03-15T15:20:33.000Z',
    },
  ],
});
export const SentEstimate = Type.Object(
  {
    ...estimateFields,
    portalUrl: Type.String({ description: 'The customer’s link (also emailed)' }),
    emailedTo: Type.Array(Type.String(), {
      description: 'Addresses mailed; empty when the customer has no email or channels left out "email"',
    }),
    ...sentTextFields,
  },
  { additionalProperties: false },
);
export const ConvertedEstimate = Type.Object(
  { estimate: Estimate, invoice: InvoiceDetail },
  { additionalProperties: false },
);

export const ConvertedToJob = Type.Object({ estimate: Estimate, job: JobDetail }, { additionalProperties: false });

export const ConvertToJobBody = Type.Object(
  {
    scheduledDate: CalendarDateIn('Required: the day the job is scheduled for'),
    startTime: Type.Optional(StartTime()),
    assignedTo: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
        maxItems: 50,
        uniqueItems: true,
        description: 'Team member user ids (GET /api/members → userId)',
      }),
    ),
    crewId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'A crew (GET /api/crew-tracking/crews)' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ scheduledDate: '2026-04-20', startTime: '08:30' }],
    description: 'Checked as POST /api/jobs checks a job: another organization’s crew or member → 400 naming it',
  },
);

export const CreateEstimateBody = createDocumentBody(
  {
    estimateDate: Type.Optional(CalendarDateIn('Default: today in the organization’s timezone')),
    expirationDate: Type.Optional(CalendarDateIn('Default: estimateDate + 30 days; not before estimateDate')),
  },
  {
    estimateDate: '2026-03-15',
    expirationDate: '2026-04-14',
    notes: 'Spring clean-up and weekly mowing',
  },
);

export const UpdateEstimateBody = updateDocumentBody(
  {
    estimateDate: Type.Optional(CalendarDateIn()),
    expirationDate: Type.Optional(CalendarDateIn()),
  },
  'Partial. A draft accepts every field; sent/viewed only expirationDate and notes; other states nothing (409 INVALID_STATE).',
);

export const EstimateListQuery = Type.Object(
  {
    status: Type.Optional(EnumList(ESTIMATE_STATUSES, 'Estimates in these states')),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    ...ExpandQuery,
    ...PageQuery,
  },
  { additionalProperties: false },
);
export const EstimateExpandQuery = Type.Object(ExpandQuery, { additionalProperties: false });

export const EstimateListResponse = Envelope(Type.Array(Estimate));
export const EstimateResponse = Envelope(Estimate);
export const SentEstimateResponse = Envelope(SentEstimate);
export const ConvertedEstimateResponse = Envelope(ConvertedEstimate);
export const ConvertedToJobResponse = Envelope(ConvertedToJob);
