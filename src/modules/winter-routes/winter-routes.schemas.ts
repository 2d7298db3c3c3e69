import { type Static, Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateTime, Envelope, Money, Nullable, PageQuery } from '../../platform/schemas.js';
import { InvoiceDetail } from '../invoices/invoices.schemas.js';
import { RUN_STATUSES, VISIT_STATUSES } from './winter-routes.states.js';

export const SERVICES = ['plow', 'salt', 'shovel', 'deice'] as const;
export const BILLING_MODES = ['per_push', 'per_event', 'seasonal'] as const;
export type BillingMode = (typeof BILLING_MODES)[number];
export type WinterService = (typeof SERVICES)[number];
export const MAX_STOPS = 500;

const Ref = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });
const Inches = (description: string) => Type.Number({ minimum: 0, maximum: 1000, description });

export const LatLng = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90 }),
    lng: Type.Number({ minimum: -180, maximum: 180 }),
  },
  { additionalProperties: false, description: 'Where the crew starts (yard, depot)' },
);

const ServiceList = Type.Array(StringEnum(SERVICES), {
  minItems: 1,
  maxItems: 4,
  uniqueItems: true,
  description: 'What is done at the stop: plow, salt, shovel, deice',
});

const BillingInput = Type.Object(
  {
    mode: StringEnum(BILLING_MODES, 'per_push: price × pushes; per_event: price once per storm; seasonal: by contract'),
    price: Money('Price per push or per event (≥ 0, two decimals); for seasonal, informational'),
  },
  { additionalProperties: false },
);

const Billing = Type.Object({ mode: StringEnum(BILLING_MODES), price: Type.Number() }, { additionalProperties: false });

export const StopInput = Type.Object(
  {
    propertyId: Ref("A property of this organization (prp_…); another organization's or a deleted one → 400"),
    services: ServiceList,
    triggerInches: Type.Optional(Inches('Snowfall (inches) from which the stop is visited; default 2')),
    billing: BillingInput,
    notes: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
  },
  { additionalProperties: false },
);
export type StopInputT = Static<typeof StopInput>;

const StopsInput = Type.Array(StopInput, {
  maxItems: MAX_STOPS,
  description: 'The stops in driving order (sequence = position, from 1); a property at most once',
});

export const Stop = Type.Object(
  {
    id: Type.String({ description: 'wst_…; kept while its property stays on the route' }),
    propertyId: Type.String(),
    sequence: Type.Integer({ description: 'From 1' }),
    services: Type.Array(StringEnum(SERVICES)),
    triggerInches: Type.Number(),
    billing: Billing,
    notes: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const Route = Type.Object(
  {
    id: Type.String({ description: 'wrt_…' }),
    name: Type.String(),
    crewId: Nullable(Type.String()),
    depot: Nullable(LatLng),
    active: Type.Boolean({ description: 'Only active routes are dispatched' }),
    stops: Type.Array(Stop),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'wrt_01JD85XM5GAR5Y6H08ZACY2WPV',
        name: 'Maple Court HOA',
        crewId: null,
        depot: { lat: 39.775, lng: -89.66 },
        active: true,
        stops: [
          {
            id: 'wst_01JD87ZHSVBHJM0JMRFBFT0PQC',
            propertyId: 'prp_01JD8Q7A4C2E6G8J0L2N4Q6S8U',
            sequence: 1,
            services: ['plow', 'salt'],
            triggerInches: 2,
            billing: { mode: 'per_push', price: 65 },
            notes: 'Pile snow left of the drive',
          },
        ],
        createdAt: '2026-11-02T13:27:09.000Z',
        updatedAt: '2026-11-02T13:27:09.000Z',
      },
    ],
  },
);

export const CreateRouteBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    crewId: Type.Optional(Nullable(Ref('Crew that drives it (crw_… of this organization)'))),
    depot: Type.Optional(Nullable(LatLng)),
    active: Type.Optional(Type.Boolean({ description: 'Default true' })),
    stops: Type.Optional(StopsInput),
  },
  { additionalProperties: false },
);
export type CreateRouteInput = Static<typeof CreateRouteBody>;

export const UpdateRouteBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    crewId: Type.Optional(Nullable(Ref('Crew that drives it (crw_… of this organization)'))),
    depot: Type.Optional(Nullable(LatLng)),
    active: Type.Optional(Type.Boolean({ description: 'false deactivates (not dispatched), true activates' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateRouteInput = Static<typeof UpdateRouteBody>;

export const ReplaceStopsBody = Type.Object({ stops: StopsInput }, { additionalProperties: false });

export const RouteListQuery = Type.Object(
  {
    ...PageQuery,
    active: Type.Optional(
      Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Only active or inactive routes' }),
    ),
  },
  { additionalProperties: false },
);

export const Optimized = Type.Object(
  {
    distanceBeforeKm: Type.Number({ description: 'Open path depot → stops in the old order, km, 2 decimals' }),
    distanceAfterKm: Type.Number({ description: 'The same for the new order; never more than before' }),
    stops: Type.Array(Stop),
  },
  { additionalProperties: false },
);

export const Storm = Type.Object(
  {
    id: Type.String({ description: 'stm_…' }),
    name: Type.String(),
    startedAt: DateTime(),
    endedAt: Nullable(DateTime()),
    snowfallInches: Type.Number(),
    ice: Type.Boolean(),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const CreateStormBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    startedAt: Type.String({ format: 'date-time' }),
    endedAt: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'Not before startedAt' }))),
    snowfallInches: Inches('Snowfall in inches (≥ 0)'),
    ice: Type.Optional(
      Type.Boolean({ description: 'Icing: stops with salt or deice are visited whatever the snowfall; default false' }),
    ),
  },
  { additionalProperties: false },
);
export type CreateStormInput = Static<typeof CreateStormBody>;

export const UpdateStormBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    startedAt: Type.Optional(Type.String({ format: 'date-time' })),
    endedAt: Type.Optional(Nullable(Type.String({ format: 'date-time', description: 'Not before startedAt' }))),
    snowfallInches: Type.Optional(Inches('Snowfall in inches (≥ 0)')),
    ice: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateStormInput = Static<typeof UpdateStormBody>;

export const StormListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const Visit = Type.Object(
  {
    id: Type.String({ description: 'wvs_…' }),
    runId: Type.String(),
    stopId: Type.String(),
    propertyId: Type.String(),
    customerId: Type.String(),
    sequence: Type.Integer(),
    services: Type.Array(StringEnum(SERVICES)),
    billing: Type.Object(
      { mode: StringEnum(BILLING_MODES), price: Type.Number() },
      { additionalProperties: false, description: "The stop's billing as it was at dispatch" },
    ),
    status: StringEnum(VISIT_STATUSES),
    servicedAt: Nullable(DateTime()),
    pushes: Nullable(Type.Integer()),
    saltLbs: Nullable(Type.Number()),
    notes: Nullable(Type.String()),
    billed: Type.Boolean({ description: 'Billed by storm invoicing; then it can no longer be recorded' }),
    invoiceId: Nullable(Type.String()),
  },
  { additionalProperties: false },
);

export const Run = Type.Object(
  {
    id: Type.String({ description: 'wrn_…' }),
    stormId: Type.String(),
    routeId: Type.String(),
    status: StringEnum(
      RUN_STATUSES,
      'dispatched; in_progress after the first recorded visit; completed when none is pending',
    ),
    visits: Type.Array(Visit, { description: 'In sequence' }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const RunListQuery = Type.Object(
  {
    ...PageQuery,
    stormId: Type.Optional(Ref('Only runs of this storm')),
    routeId: Type.Optional(Ref('Only runs of this route')),
  },
  { additionalProperties: false },
);

export const DispatchBody = Nullable(
  Type.Object(
    {
      routeIds: Type.Optional(
        Type.Array(Ref('wrt_… of this organization'), {
          minItems: 1,
          maxItems: 500,
          uniqueItems: true,
          description:
            'Routes to dispatch; default every active route not yet dispatched that has a qualifying stop. A named route already dispatched → 409 CONFLICT; inactive or without a qualifying stop → 409 INVALID_STATE',
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
export type DispatchInput = Static<typeof DispatchBody>;

export const RecordVisitBody = Type.Object(
  {
    status: Type.Union([Type.Literal('serviced'), Type.Literal('skipped')]),
    servicedAt: Type.Optional(Type.String({ format: 'date-time', description: 'Default now (serviced only)' })),
    pushes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Plow passes, ≥ 1, default 1' })),
    saltLbs: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'Salt spread, lb' })),
    notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  },
  { additionalProperties: false },
);
export type RecordVisitInput = Static<typeof RecordVisitBody>;

export const VisitParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  visitId: Type.String({ minLength: 1, maxLength: 64 }),
});

export const ReportRoute = Type.Object(
  {
    routeId: Type.String(),
    serviced: Type.Integer(),
    skipped: Type.Integer(),
    pending: Type.Integer(),
    pushes: Type.Integer(),
    saltLbs: Type.Number(),
    firstServicedAt: Nullable(DateTime()),
    lastServicedAt: Nullable(DateTime()),
    billed: Type.Number({ description: 'Amount billed for this route’s visits in this storm' }),
  },
  { additionalProperties: false },
);

export const StormReport = Type.Object(
  { stormId: Type.String(), routes: Type.Array(ReportRoute) },
  { additionalProperties: false },
);

export const RouteResponse = Envelope(Route);
export const RouteList = Envelope(Type.Array(Route));
export const OptimizeResponse = Envelope(Optimized);
export const StormResponse = Envelope(Storm);
export const StormList = Envelope(Type.Array(Storm));
export const RunResponse = Envelope(Run);
export const RunList = Envelope(Type.Array(Run));
export const DispatchResponse = Envelope(Type.Object({ runs: Type.Array(Run) }, { additionalProperties: false }));
export const StormInvoiceResponse = Envelope(
  Type.Object({ invoices: Type.Array(InvoiceDetail) }, { additionalProperties: false }),
);
export const StormReportResponse = Envelope(StormReport);
