import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import { CreateDeviceBody, CreatedDeviceResponse, DeviceList } from './devices.schemas.js';
import { createDevice, listDevices, revokeDevice } from './devices.service.js';

/** Device management is refused to device tokens themselves (platform/auth/scopes.ts). */
export async function deviceRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, resolver } = app.deps;
  const tags = ['crew-tracking'];

  app.post(
    '/api/crew-tracking/devices',
    {
      schema: {
        tags,
        summary: 'Create a mobile device token (dev_…, shown once) acting as one member',
        description:
          'Owner/admin may create one for any member, other roles only for themselves (403). The dev_… token is returned once and stored hashed; it acts as its member only on /api/crew-tracking/* (except devices) and GET /api/jobs*, and device tokens cannot call this route.',
        body: CreateDeviceBody,
        response: { 201: CreatedDeviceResponse },
      },
    },
    async (request, reply) => {
      const device = await inRequestTenant(database.db, request, (ctx) => createDevice(ctx, request.body));
      return reply.code(201).send({ data: device });
    },
  );

  app.get(
    '/api/crew-tracking/devices',
    {
      schema: {
        tags,
        summary: "List active devices (no tokens): all for owner/admin, a member's own otherwise",
        description: 'Revoked devices are left out and tokens are never returned.',
        response: { 200: DeviceList },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, listDevices) }),
  );

  app.delete(
    '/api/crew-tracking/devices/:id',
    {
      schema: {
        tags,
        summary: 'Revoke a device token at once',
        description:
          'Owner/admin may revoke any device, other roles only their own (404 otherwise); the token stops working immediately.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => revokeDevice(ctx, request.params.id));
      // The revocation bumped auth_generation in its own transaction (a trigger), so every
      // process already refuses the token; drop this process's cached copy too.
      resolver.invalidate();
      return reply.code(204).send(null);
    },
  );
}
