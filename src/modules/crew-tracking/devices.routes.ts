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
        response: { 200: DeviceList },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, listDevices) }),
  );

  app.delete(
    '/api/crew-tracking/devices/:id',
    {
      schema: { tags, summary: 'Revoke a device token at once', params: IdParams, response: { 204: NoContent } },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => revokeDevice(ctx, request.params.id));
      // The resolver caches principals by credential: drop them so the token stops now.
      resolver.invalidate();
      return reply.code(204).send(null);
    },
  );
}
