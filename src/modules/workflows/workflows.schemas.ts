import { type Static, Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { EVENT_CATALOG } from '../../platform/events/catalog.js';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';
import { OPERATORS } from './workflows.conditions.js';

export const NAME_PATTERN = '^[a-z0-9][a-z0-9_.-]*$';
export const MAX_ACTIONS = 10;
export const MAX_CONDITIONS = 20;
export const RUN_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export const ACTION_STATUSES = ['succeeded', 'failed', 'skipped'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

const Name = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: NAME_PATTERN,
  description:
    'Lower-case letters, digits, _, . and -, starting with a letter or digit; unique in the organization (409 CONFLICT). The emit action sends workflow.<name>.',
});
const Description = Type.String({ maxLength: 1000 });

const Trigger = Type.Object(
  {
    event: StringEnum(EVENT_CATALOG, 'A catalog event (spec 6.2); workflow.<name> events never trigger workflows'),
  },
  { additionalProperties: false },
);

const Scalar = Type.Union([Type.String({ maxLength: 1000 }), Type.Number(), Type.Boolean(), Type.Null()]);

export const Condition = Type.Object(
  {
    field: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'Dotted path into the trigger event data, e.g. invoice.total or amountDue; a path the event cannot carry → 400',
    }),
    op: StringEnum(
      OPERATORS,
      'eq | ne | gt | gte | lt | lte | contains | in. Numbers compare as numbers; contains: substring or array element; in: value is an array',
    ),
    value: Type.Union([Scalar, Type.Array(Scalar, { maxItems: 100 })], {
      description: 'A string, number, boolean or null; an array for in',
    }),
  },
  { additionalProperties: false },
);

const EmitAction = Type.Object(
  { type: Type.Literal('emit', { description: 'Emit workflow.<this workflow’s name>' }) },
  { additionalProperties: false, title: 'EmitAction' },
);
const EmailAction = Type.Object(
  {
    type: Type.Literal('email'),
    // An address is checked by the schema's `email` format (ajv-formats), as everywhere in the API.
    to: Type.Union(
      [
        Type.Literal('customer', { description: 'The trigger’s customer (skipped when it has no address)' }),
        Type.String({ format: 'email', maxLength: 254, description: 'An email address' }),
      ],
      { description: '`customer` (the trigger’s customer; skipped when it has no address) or an email address' },
    ),
    subject: Type.String({ minLength: 1, maxLength: 300, description: '{{dotted.path}} placeholders allowed' }),
    body: Type.String({ minLength: 1, maxLength: 20000, description: '{{dotted.path}} placeholders allowed' }),
  },
  { additionalProperties: false, title: 'EmailAction' },
);
const TagAction = Type.Object(
  {
    type: Type.Literal('add_customer_tag'),
    tag: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Added to the trigger’s customer' }),
  },
  { additionalProperties: false, title: 'AddCustomerTagAction' },
);
const JobAction = Type.Object(
  {
    type: Type.Literal('create_job'),
    title: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '\\S',
      description: 'The job’s one service; {{dotted.path}} placeholders allowed',
    }),
    daysFromNow: Type.Integer({
      minimum: 0,
      maximum: 3650,
      description: 'Scheduled on today (organization timezone) + daysFromNow',
    }),
  },
  { additionalProperties: false, title: 'CreateJobAction' },
);

/** A tagged union on `type` (oneOf + discriminator): errors name the fields of the action type given. */
export const Action = Type.Unsafe<Static<typeof EmitAction | typeof EmailAction | typeof TagAction | typeof JobAction>>(
  {
    oneOf: [EmitAction, EmailAction, TagAction, JobAction],
    discriminator: { propertyName: 'type' },
    description: 'emit | email | add_customer_tag | create_job',
  },
);
export type ActionDef = Static<typeof Action>;
export type ConditionDef = Static<typeof Condition>;

const Conditions = Type.Array(Condition, {
  maxItems: MAX_CONDITIONS,
  description: 'All must hold (AND); none = always. A missing path makes its condition false.',
});
const Actions = Type.Array(Action, { minItems: 1, maxItems: MAX_ACTIONS, description: '1..10 actions, run in order' });

export const CreateWorkflowBody = Type.Object(
  {
    name: Name,
    description: Type.Optional(Nullable(Description)),
    trigger: Trigger,
    conditions: Type.Optional(Conditions),
    actions: Actions,
    active: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type CreateWorkflowInput = Static<typeof CreateWorkflowBody>;

export const UpdateWorkflowBody = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Nullable(Description)),
    trigger: Type.Optional(Trigger),
    conditions: Type.Optional(Conditions),
    actions: Type.Optional(Actions),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UpdateWorkflowInput = Static<typeof UpdateWorkflowBody>;

export const Workflow = Type.Object(
  {
    id: Type.String({ description: 'wfl_…' }),
    name: Type.String(),
    description: Nullable(Type.String()),
    trigger: Trigger,
    conditions: Type.Array(Condition),
    actions: Type.Array(Action),
    active: Type.Boolean(),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const ActionResult = Type.Object(
  {
    type: Type.String({ description: 'emit | email | add_customer_tag | create_job' }),
    status: StringEnum(ACTION_STATUSES),
    error: Type.Optional(Type.String()),
    eventId: Type.Optional(Type.String({ description: 'emit: the workflow.<name> event' })),
    jobId: Type.Optional(Type.String({ description: 'create_job: the job created' })),
    customerId: Type.Optional(Type.String({ description: 'add_customer_tag: the customer tagged' })),
    changed: Type.Optional(Type.Boolean({ description: 'add_customer_tag: false when the tag was already there' })),
  },
  { additionalProperties: false },
);
export type ActionResultT = Static<typeof ActionResult>;

export const WorkflowRun = Type.Object(
  {
    id: Type.String({ description: 'wfr_…' }),
    workflowId: Type.String(),
    eventId: Type.String({ description: 'The trigger event' }),
    event: Type.String({ description: 'The trigger event type' }),
    depth: Type.Integer({ description: 'The trigger event’s depth (0 = caused by a user or API call)' }),
    status: StringEnum(RUN_STATUSES),
    actions: Type.Array(ActionResult, { description: 'One result per action done so far, in order' }),
    createdAt: DateTime(),
    finishedAt: Nullable(DateTime()),
  },
  { additionalProperties: false },
);

export const WorkflowListQuery = Type.Object(
  {
    ...PageQuery,
    active: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'Filter' })),
    triggerEvent: Type.Optional(StringEnum(EVENT_CATALOG, 'Only workflows of this trigger')),
  },
  { additionalProperties: false },
);
export const RunListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(StringEnum(RUN_STATUSES)) },
  { additionalProperties: false },
);

export const WorkflowResponse = Envelope(Workflow);
export const WorkflowList = Envelope(Type.Array(Workflow));
export const RunList = Envelope(Type.Array(WorkflowRun));
export const RunResponse = Envelope(WorkflowRun);
