import { type Static, Type } from 'typebox';
import { DateTime, Envelope, PageQuery } from '../../platform/schemas.js';

export const MemberId = (description?: string) =>
  Type.String({ minLength: 1, maxLength: 64, description: description ?? "A member's id (mem_…, GET /api/members)" });

const CrewMember = Type.Object(
  { memberId: Type.String({ description: 'mem_…' }), userId: Type.String({ description: "The member's user id" }) },
  { additionalProperties: false },
);

export const Crew = Type.Object(
  {
    id: Type.String({ description: 'crw_…' }),
    name: Type.String(),
    memberIds: Type.Array(Type.String(), { description: 'Members of the crew (mem_…)' }),
    members: Type.Array(CrewMember, { description: 'The same members with their user ids' }),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);

export const CreateCrewBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Crew name, e.g. "Mowing crew A"' }),
    memberIds: Type.Optional(Type.Array(MemberId(), { maxItems: 200, description: 'Members of the organization' })),
  },
  { additionalProperties: false },
);
export type CreateCrewInput = Static<typeof CreateCrewBody>;

export const UpdateCrewBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    memberIds: Type.Optional(Type.Array(MemberId(), { maxItems: 200, description: 'Replaces the member list' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateCrewInput = Static<typeof UpdateCrewBody>;

export const CrewListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export const CrewResponse = Envelope(Crew);
export const CrewList = Envelope(Type.Array(Crew));
