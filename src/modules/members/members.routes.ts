import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { DateTime, Envelope, IdParams, NoContent, PageQuery } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';

import { changeMemberRole, listMembers } from './members.service.js';

const RoleSchema = Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]);

const Member = Type.Object(
  {
    id: Type.String({ description: 'mem_…' }),
    userId: Type.String({ description: 'The team member id used in job assignments' }),
    name: Type.String(),
    email: Type.String(),
    role: RoleSchema,
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export { listMembers };

/** The flow (src/flows/delete-referenced.ts) that deletes a member: the rows of other modules naming it let go first. */
export interface MemberFlows {
  deleteMember(ctx: Ctx, id: string): Promise<void>;
}

export default async function memberRoutes(fastify: FastifyInstance, { flows }: { flows: MemberFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, resolver } = app.deps;
  const tags = ['members'];
  const admin = { roles: ['owner', 'admin'] } as const;

  app.get(
    '/api/members',
    {
      schema: {
        tags,
        summary: "The active organization's members, oldest first",
        description: "With each member's role and email.",
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Envelope(Type.Array(Member)) },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listMembers(ctx, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.patch(
    '/api/members/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: "Change a member's role",
        description:
          'Owner/admin. Only an owner can make someone an owner or change an owner; the last owner cannot be demoted (409 INVALID_STATE).',
        params: IdParams,
        body: Type.Object({ role: RoleSchema }, { additionalProperties: false }),
        response: { 200: Envelope(Member) },
      },
    },
    async (request) => {
      const member = await inRequestTenant(database.db, request, (ctx) =>
        changeMemberRole(ctx, request.params.id, request.body.role),
      );
      resolver.invalidate();
      return { data: member };
    },
  );

  app.delete(
    '/api/members/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Remove a member from the organization',
        description:
          'Owner/admin. Only an owner can remove an owner; the last owner cannot be removed (409 INVALID_STATE). The user keeps their account.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteMember(ctx, request.params.id));
      resolver.invalidate();
      return reply.code(204).send(null);
    },
  );
}
