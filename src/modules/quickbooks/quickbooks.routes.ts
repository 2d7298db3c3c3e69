import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { prefersHtml } from '../../platform/accept.js';
import { inRequestTenant, tenantOf } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { SecretBox } from '../../platform/secrets.js';
import {
  CallbackQuery,
  ConnectionResponse,
  ConnectResponse,
  RecordListQuery,
  RecordParams,
  SyncRecordList,
  SyncRecordResponse,
} from './quickbooks.schemas.js';
import {
  checkCallback,
  connectionStatus,
  dropConnection,
  listRecords,
  retryRecord,
  revokeTokens,
  saveConnection,
  startConnect,
  tokensForCallback,
} from './quickbooks.service.js';

const roles = ['owner', 'admin'] as const;

/** QuickBooks Online, one way (operations.md §11): the connection and the records that did not sync. */
export default async function quickbooksRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const box = new SecretBox(config.authSecret);
  const tags = ['quickbooks'];
  const base = '/api/integrations/quickbooks';

  app.get(
    base,
    {
      config: { roles },
      schema: {
        tags,
        summary: 'The QuickBooks Online connection: status, company, last sync, records failing',
        description: 'Owner/admin only.',
        response: { 200: ConnectionResponse },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, (ctx) => connectionStatus(ctx)) }),
  );

  app.post(
    `${base}/connect`,
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Start connecting QuickBooks Online: the Intuit page to send the owner to',
        description:
          'Owner/admin only. The answer’s authorizeUrl carries a signed state bound to this organization and person, good for 10 minutes; Intuit sends the owner back to the callback. 409 INVALID_STATE when the server has no QuickBooks app keys (QUICKBOOKS_CLIENT_ID, QUICKBOOKS_CLIENT_SECRET).',
        response: { 200: ConnectResponse },
      },
    },
    async (request) => {
      const { organizationId, actor } = tenantOf(request);
      return { data: startConnect(config, organizationId, actor.id) };
    },
  );

  app.get(
    `${base}/callback`,
    {
      config: { roles, errors: [409] },
      schema: {
        tags,
        summary: 'Where Intuit sends the owner back: stores the connection (tokens sealed)',
        description:
          "Owner/admin only, the same organization and person that called connect. A state not issued here or older than 10 minutes → 400, one made for another organization or person → 403, Intuit refusing the code → 409; nothing is written then. On success every customer, invoice (out of draft) and payment of the organization starts syncing, older ones included. The owner arrives here in a browser from Intuit's consent page: a browser (an Accept header preferring text/html over application/json) is answered 303 to the console's Books page once the connection is stored; any other client gets the connection as JSON.",
        querystring: CallbackQuery,
        response: {
          200: ConnectionResponse,
          303: Type.Null({ description: "A browser is sent back to the console's Books page, /app/books (Location)" }),
        },
      },
    },
    async (request, reply) => {
      const { organizationId, actor } = tenantOf(request);
      checkCallback(config, request.query, organizationId, actor.id);
      const rawQuery = request.url.slice(request.url.indexOf('?') + 1);
      const tokens = await tokensForCallback(config, rawQuery);
      const data = await inRequestTenant(database.db, request, (ctx) =>
        saveConnection(ctx, box, request.query.realmId as string, tokens),
      );
      if (prefersHtml(request.headers.accept)) return reply.redirect('/app/books', 303);
      return { data };
    },
  );

  app.post(
    `${base}/disconnect`,
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Disconnect QuickBooks Online (revokes the grant at Intuit)',
        description:
          'Owner/admin only. The records not yet synced are dropped; what QuickBooks already has stays there. Connecting the same company again updates those records instead of making them twice. Answers the status (disconnected), also when nothing was connected.',
        response: { 200: ConnectionResponse },
      },
    },
    async (request) => {
      const refreshToken = await inRequestTenant(database.db, request, (ctx) => dropConnection(ctx, box));
      if (refreshToken) await revokeTokens(config, refreshToken);
      return { data: await inRequestTenant(database.db, request, (ctx) => connectionStatus(ctx)) };
    },
  );

  app.get(
    `${base}/records`,
    {
      config: { roles },
      schema: {
        tags,
        summary:
          'The records sent to QuickBooks, newest first; status=failed lists what did not sync, with QuickBooks’ own error',
        description: 'Owner/admin only.',
        querystring: RecordListQuery,
        response: { 200: SyncRecordList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listRecords(ctx, request.query.status, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    `${base}/records/:id/retry`,
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Send a failed record to QuickBooks again',
        description:
          'Owner/admin only. A failed record goes back to pending from its first attempt (fix the cause in QuickBooks first, e.g. reopen its closed period). Not failed → 409; unknown → 404.',
        params: RecordParams,
        response: { 200: SyncRecordResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => retryRecord(ctx, request.params.id)),
    }),
  );
}
