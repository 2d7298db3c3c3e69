import { Type } from 'typebox';
import { DateTime, Envelope } from '../../platform/schemas.js';

export const Organization = Type.Object(
  {
    id: Type.String({ description: 'org_…' }),
    name: Type.String(),
    plan: Type.Union([Type.Literal('starter'), Type.Literal('pro'), Type.Literal('business')]),
    timezone: Type.String({ description: 'IANA timezone used for "today" and date filters' }),
    role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')], {
      description: "The caller's role in this organization",
    }),
    active: Type.Boolean({ description: "Whether it is the session's active organization" }),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export const CreateOrganizationBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S', description: 'Not blank' }),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'IANA name; default UTC' })),
  },
  { additionalProperties: false },
);

export const OrganizationResponse = Envelope(Organization);
export const OrganizationList = Envelope(Type.Array(Organization));
