import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import {
  LatestList,
  PostLocationsBody,
  PostLocationsResponse,
  TrailQuery,
  TrailResponse,
} from './locations.schemas.js';
import { latestLocations, postLocations, trail } from './locations.service.js';

export async function locationRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['crew-tracking'];

  app.post(
    '/api/crew-tracking/locations',
    {
      schema: {
        tags,
        summary: "Post 1..500 GPS points for the caller's member",
        description:
          'Points are recorded for the member behind the caller (a user or device token). Any invalid point, such as recordedAt more than 5 minutes in the future, refuses the whole batch with 400; points older than 90 days are removed by the worker.',
        body: PostLocationsBody,
        response: { 201: PostLocationsResponse },
      },
    },
    async (request, reply) => {
      const result = await inRequestTenant(database.db, request, (ctx) => postLocations(ctx, request.body));
      return reply.code(201).send({ data: result });
    },
  );

  app.get(
    '/api/crew-tracking/locations/latest',
    {
      schema: {
        tags,
        summary: 'The latest point of each member',
        description: 'For each member that has points, the one with the greatest recordedAt.',
        response: { 200: LatestList },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, latestLocations) }),
  );

  app.get(
    '/api/crew-tracking/locations',
    {
      schema: {
        tags,
        summary: "A member's trail in a time range, oldest first (Link rel=next continues after the last point)",
        description: 'from must be before to, else 400. Follow the Link rel=next header while there are more points.',
        querystring: TrailQuery,
        response: { 200: TrailResponse },
      },
    },
    async (request, reply) => {
      const { points, more } = await inRequestTenant(database.db, request, (ctx) => trail(ctx, request.query));
      const last = points.at(-1);
      if (more && last) {
        const url = new URL(request.url, 'http://placeholder');
        url.searchParams.set('from', new Date(last.recordedAt.getTime() + 1).toISOString());
        reply.header('Link', `<${url.pathname}${url.search}>; rel="next"`);
      }
      return { data: points };
    },
  );
}
