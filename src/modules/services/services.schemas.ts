import { type Static, Type } from 'typebox';
import { CalendarDateIn } from '../../platform/calendar-date.js';
import { DateOnly, DateTime, Envelope, Money, Nullable, PageQuery } from '../../platform/schemas.js';

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

export const RepriceServiceBody = Type.Object(
  {
    unitPrice: Money('The new price per unit, at most two decimals (e.g. 48.50)'),
    from: Type.Optional(
      CalendarDateIn(
        'The first visit date at the new price; default today. From today to the end of the visit horizon (today + visitHorizonDays)',
      ),
    ),
    dryRun: Type.Optional(
      Type.Boolean({ description: 'true: answer what would change and write nothing; default false' }),
    ),
  },
  { additionalProperties: false },
);
export type RepriceServiceInput = Static<typeof RepriceServiceBody>;

const RepricedLine = Type.Object(
  {
    index: Type.Integer({ description: "The line's position in the schedule's lineItems (from 0)" }),
    description: Type.String(),
    quantity: Type.Number(),
    oldUnitPrice: Type.Number(),
    unitPrice: Type.Number(),
    oldAmount: Type.Number(),
    amount: Type.Number(),
  },
  { additionalProperties: false },
);

const RepricedSchedule = Type.Object(
  {
    id: Type.String({ description: 'sch_…' }),
    title: Type.String(),
    customerId: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
    lines: Type.Array(RepricedLine, { description: 'The lines naming the service whose price changed' }),
    oldTotal: Type.Number({ description: "A visit's total before" }),
    total: Type.Number({ description: "A visit's total after" }),
    visitsRepriced: Type.Integer({
      description:
        'Visits already made, dated on or after from, still scheduled, not invoiced and not edited one by one, that take the new price',
    }),
  },
  { additionalProperties: false },
);

export const RepriceServiceResponse = Envelope(
  Type.Object(
    {
      service: Service,
      oldUnitPrice: Type.Number(),
      from: DateOnly('The first visit date at the new price'),
      dryRun: Type.Boolean({ description: 'true: nothing was written' }),
      schedules: Type.Array(RepricedSchedule, {
        description: 'The active and paused schedules whose lines name the service and had another price',
      }),
      visitsRepriced: Type.Integer({ description: 'The sum of the schedules’ visitsRepriced' }),
    },
    { additionalProperties: false },
  ),
);
