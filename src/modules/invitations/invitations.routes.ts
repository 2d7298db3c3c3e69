import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { inRequestTenant, userOf } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { DateTime, Envelope, IdParams, PageQuery } from '../../platform/schemas.js';

import { acceptInvitation, createInvitation, listInvitations } from './invitations.service.js';

const Invitation = Type.Object(
  {
    id: Type.String({ description: 'ivt_…' }),
    email: Type.String(),
    role: Type.Union([Type.Literal('admin'), Type.Literal('member')]),
    status: Type.Union([Type.Literal('pending'), Type.Literal('accepted')]),
    expiresAt: DateTime(),
    createdAt: DateTime(),
    acceptUrl: Type.String({ description: 'POST here, signed in as the invitee, to join' }),
  },
  { additionalProperties: false },
);

const CreateInvitationBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    role: Type.Union([Type.Literal('admin'), Type.Literal('member')]),
  },
  { additionalProperties: false },
);

const Membership = Type.Object({
  organizationId: Type.String(),
  role: Type.Union([Type.Literal('admin'), Type.Literal('member')]),
});

export default async function invitationRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config, resolver } = app.deps;
  const tags = ['invitations'];
  const admin = { roles: ['owner', 'admin'] } as const;

  app.post(
    '/api/invitations',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Invite someone by email; they accept while signed in with that email',
        description: 'Owner/admin. The invitation email carries a link; the role is given on acceptance.',
        body: CreateInvitationBody,
        response: { 201: Envelope(Invitation) },
      },
    },
    async (request, reply) => {
      const inv = await inRequestTenant(database.db, request, (ctx) =>
        createInvitation(ctx, config.baseUrl, request.body),
      );
      return reply.code(201).send({ data: inv });
    },
  );

  app.get(
    '/api/invitations',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Pending and accepted invitations, newest first',
        description: 'Of the active organization.',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Envelope(Type.Array(Invitation)) },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listInvitations(ctx, config.baseUrl, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    '/api/invitations/:id/accept',
    {
      config: { access: 'user' },
      schema: {
        tags,
        summary: 'Accept an invitation as the signed-in invitee; the organization becomes active',
        description: "The signed-in user's email must match the invitation's; 404 otherwise.",
        params: IdParams,
        response: { 200: Envelope(Membership) },
      },
    },
    async (request) => {
      const result = await acceptInvitation(
        database.db,
        userOf(request),
        request.principal?.sessionId,
        request.params.id,
      );
      resolver.invalidate();
      return { data: result };
    },
  );
}
