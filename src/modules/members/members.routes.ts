import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { asc, eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { members, users } from '../../db/schema/index.js';
import { tenantOf } from '../../platform/access.js';
import { DateTime, Envelope } from '../../platform/schemas.js';
import { type Ctx, inTenant } from '../../platform/tenancy.js';

const Member = Type.Object(
  {
    id: Type.String({ description: 'mem_…' }),
    userId: Type.String({ description: 'The team member id used in job assignments' }),
    name: Type.String(),
    email: Type.String(),
    role: Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

/** The organization's team; other modules check assignments against it. */
export async function listMembers(ctx: Ctx) {
  const rows = await ctx.tx
    .select({
      id: members.id,
      userId: members.userId,
      name: users.name,
      email: users.email,
      role: members.role,
      createdAt: members.createdAt,
    })
    .from(members)
    .innerJoin(users, eq(users.id, members.userId))
    .where(eq(members.organizationId, ctx.organizationId))
    .orderBy(asc(members.createdAt), asc(members.id));
  return rows.map((r) => ({ ...r, role: r.role as 'owner' | 'admin' | 'member' }));
}

export default async function memberRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  app.get(
    '/api/members',
    {
      schema: {
        tags: ['members'],
        summary: "The active organization's members",
        response: { 200: Envelope(Type.Array(Member)) },
      },
    },
    async (request) => {
      const t = tenantOf(request);
      return { data: await inTenant(database.db, t.organizationId, t.actor, listMembers) };
    },
  );
}
