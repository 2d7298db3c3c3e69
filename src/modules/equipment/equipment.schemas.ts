import { type Static, Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, Money, Nullable, PageQuery } from '../../platform/schemas.js';

export const CATEGORIES = [
  'mower',
  'plow',
  'spreader',
  'salter',
  'truck',
  'trailer',
  'blower',
  'trimmer',
  'other',
] as const;
export const STATUSES = ['available', 'in_use', 'maintenance', 'retired'] as const;
export type EquipmentStatus = (typeof STATUSES)[number];

const Category = StringEnum(CATEGORIES);
const Status = StringEnum(
  STATUSES,
  'available → in_use by check-out; in_use → available by check-in; maintenance and retired by PATCH',
);
const Hours = (description: string) => Type.Number({ minimum: 0, maximum: 1_000_000, description });
const Text = (max: number, description?: string) =>
  Type.String({ maxLength: max, ...(description ? { description } : {}) });
const Ref = (description: string) => Type.String({ minLength: 1, maxLength: 64, description });

export const Equipment = Type.Object(
  {
    id: Type.String({ description: 'eqp_…' }),
    name: Type.String(),
    category: Category,
    make: Nullable(Type.String()),
    model: Nullable(Type.String()),
    serialNumber: Nullable(Type.String({ description: 'Unique in the organization' })),
    purchaseDate: Nullable(Type.String({ description: 'YYYY-MM-DD' })),
    purchaseCost: Nullable(Type.Number()),
    hourMeter: Nullable(Type.Number({ description: 'Engine hours; never goes down' })),
    notes: Nullable(Type.String()),
    status: Status,
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: 'eqp_01JD5F11PRM80W1FE0S9T3CQNC',
        name: 'Snowplow truck #2',
        category: 'truck',
        make: 'Ford',
        model: 'F-350 with Boss 8\'2" V-plow',
        serialNumber: '1FT8W3BT4SEC12345',
        purchaseDate: '2024-10-15',
        purchaseCost: 68500,
        hourMeter: 412.5,
        notes: 'Plow mount serviced each October',
        status: 'available',
        createdAt: '2026-01-12T16:02:44.000Z',
        updatedAt: '2026-01-12T16:02:44.000Z',
      },
    ],
  },
);

const editable = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  category: Category,
  make: Nullable(Text(100)),
  model: Nullable(Text(100)),
  serialNumber: Nullable(
    Type.String({ minLength: 1, maxLength: 100, description: 'Unique in the organization (409)' }),
  ),
  purchaseDate: Nullable(DateOnly('Purchase date')),
  purchaseCost: Nullable(Money('Purchase cost')),
  hourMeter: Nullable(Hours('Engine hours; a lower reading than the current one → 400')),
  notes: Nullable(Text(5000)),
};

export const CreateEquipmentBody = Type.Object(
  {
    name: editable.name,
    category: editable.category,
    make: Type.Optional(editable.make),
    model: Type.Optional(editable.model),
    serialNumber: Type.Optional(editable.serialNumber),
    purchaseDate: Type.Optional(editable.purchaseDate),
    purchaseCost: Type.Optional(editable.purchaseCost),
    hourMeter: Type.Optional(editable.hourMeter),
    notes: Type.Optional(editable.notes),
  },
  { additionalProperties: false },
);
export type CreateEquipmentInput = Static<typeof CreateEquipmentBody>;

export const UpdateEquipmentBody = Type.Object(
  {
    name: Type.Optional(editable.name),
    category: Type.Optional(editable.category),
    make: Type.Optional(editable.make),
    model: Type.Optional(editable.model),
    serialNumber: Type.Optional(editable.serialNumber),
    purchaseDate: Type.Optional(editable.purchaseDate),
    purchaseCost: Type.Optional(editable.purchaseCost),
    hourMeter: Type.Optional(editable.hourMeter),
    notes: Type.Optional(editable.notes),
    status: Type.Optional(
      Type.Union([Type.Literal('available'), Type.Literal('maintenance'), Type.Literal('retired')], {
        description: 'Retire an item, send it to or bring it back from maintenance (not while in use: 409)',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateEquipmentInput = Static<typeof UpdateEquipmentBody>;

export const EquipmentListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(Status),
    category: Type.Optional(Category),
  },
  { additionalProperties: false },
);

export const Assignment = Type.Object(
  {
    id: Type.String({ description: 'eqa_…' }),
    equipmentId: Type.String(),
    memberId: Nullable(Type.String({ description: 'The member who took it (mem_…)' })),
    userId: Nullable(Type.String({ description: "That member's user id; null without a member" })),
    crewId: Nullable(Type.String()),
    jobId: Nullable(Type.String()),
    checkedOutAt: DateTime(),
    checkedInAt: Nullable(DateTime()),
    hourMeterOut: Nullable(Type.Number()),
    hourMeterIn: Nullable(Type.Number()),
  },
  { additionalProperties: false },
);

export const CheckOutBody = Type.Object(
  {
    memberId: Type.Optional(Ref('Member who takes it (mem_…)')),
    crewId: Type.Optional(Ref('Crew that takes it (crw_…)')),
    jobId: Type.Optional(Ref('Job it is for (job_…)')),
    at: Type.Optional(Type.String({ format: 'date-time', description: 'Default now' })),
  },
  { additionalProperties: false },
);
export type CheckOutInput = Static<typeof CheckOutBody>;

export const CheckInBody = Type.Object(
  {
    at: Type.Optional(Type.String({ format: 'date-time', description: 'Default now; not before the check-out' })),
    hourMeter: Type.Optional(Hours('Reading at return; never lower than the current one')),
  },
  { additionalProperties: false },
);
export type CheckInInput = Static<typeof CheckInBody>;

export const MaintenancePlan = Type.Object(
  {
    id: Type.String({ description: 'mpl_…' }),
    equipmentId: Type.String(),
    name: Type.String(),
    everyHours: Nullable(Type.Number()),
    everyDays: Nullable(Type.Integer()),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export const CreatePlanBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'e.g. "Oil change"' }),
    everyHours: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 100_000, description: 'Interval in engine hours' }),
    ),
    everyDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650, description: 'Interval in days' })),
  },
  { additionalProperties: false },
);
export type CreatePlanInput = Static<typeof CreatePlanBody>;

export const MaintenanceLog = Type.Object(
  {
    id: Type.String({ description: 'mlg_…' }),
    equipmentId: Type.String(),
    planId: Nullable(Type.String()),
    performedAt: DateTime(),
    hourMeter: Nullable(Type.Number()),
    cost: Nullable(Type.Number()),
    notes: Type.String(),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export const CreateLogBody = Type.Object(
  {
    performedAt: Type.String({ format: 'date-time', description: 'When the work was done' }),
    hourMeter: Type.Optional(Hours('Reading at the service; never lower than the current one')),
    cost: Type.Optional(Money('Cost of the work')),
    notes: Type.String({ minLength: 1, maxLength: 5000 }),
    planId: Type.Optional(Ref('The plan this work fulfils (mpl_… of this item)')),
  },
  { additionalProperties: false },
);
export type CreateLogInput = Static<typeof CreateLogBody>;

export const DueRow = Type.Object(
  {
    equipmentId: Type.String(),
    equipmentName: Type.String(),
    planId: Type.String(),
    planName: Type.String(),
    basis: Type.Union([Type.Literal('hours'), Type.Literal('days')]),
    dueSince: Type.Union([Type.String({ format: 'date-time' }), Type.Number()], {
      description:
        'When it fell due: the last log (or purchase, or plan creation) + interval; a date-time for day plans, an hour-meter reading for hour plans',
    }),
    overdueFraction: Type.Number({ description: '(elapsed − interval) ÷ interval; 0 = just due' }),
  },
  { additionalProperties: false },
);

export const EquipmentResponse = Envelope(Equipment);
export const EquipmentList = Envelope(Type.Array(Equipment));
export const AssignmentList = Envelope(Type.Array(Assignment));
export const PlanResponse = Envelope(MaintenancePlan);
export const PlanList = Envelope(Type.Array(MaintenancePlan));
export const LogResponse = Envelope(MaintenanceLog);
export const LogList = Envelope(Type.Array(MaintenanceLog));
export const DueList = Envelope(Type.Array(DueRow));
