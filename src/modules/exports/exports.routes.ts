import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams } from '../../platform/schemas.js';
import { EXPORT_RESOURCE_NAMES } from './exports.registry.js';
import { CreateExportBody, ExportList, ExportListQuery, ExportResponse, ZipResponse } from './exports.schemas.js';
import { createExport, exportArchive, getExport, listExports } from './exports.service.js';

/** `/api/exports` (operations.md §7, spec 8 "bulk export"): owner/admin only, every route. */
export default async function exportRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const tags = ['exports'];
  const admin = { roles: ['owner', 'admin'] } as const;

  app.post(
    '/api/exports',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Request a bulk export of the organization (owner/admin) → 202, built by the worker',
        description: `Owner/admin only. format ndjson or csv (required); resources from ${EXPORT_RESOURCE_NAMES.join(', ')} (default: all). Answers 202 with the queued export; the worker writes every row in keyset order into a zip with one file per resource, rows in their REST shape (money as decimals, soft-deleted rows left out). Follow progress with GET /api/exports/{id}. An unknown resource → 400.`,
        body: CreateExportBody,
        response: { 202: ExportResponse },
      },
    },
    async (request, reply) => {
      const view = await inRequestTenant(database.db, request, (ctx) => createExport(ctx, request.body));
      return reply.code(202).send({ data: view });
    },
  );

  app.get(
    '/api/exports',
    {
      config: admin,
      schema: {
        tags,
        summary: "The organization's exports, newest first (owner/admin)",
        description: 'Owner/admin only; paginated like every list.',
        querystring: ExportListQuery,
        response: { 200: ExportList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listExports(ctx, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/exports/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'One export: status, progress, size and expiry (owner/admin)',
        description:
          'Owner/admin only. status queued | running | completed | failed; progress {rows, totalRows, percent}; sizeBytes and expiresAt (7 days after completion) once completed.',
        params: IdParams,
        response: { 200: ExportResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getExport(ctx, request.params.id)),
    }),
  );

  app.get(
    '/api/exports/:id/download',
    {
      config: { ...admin, errors: [409, 410] },
      schema: {
        tags,
        summary: 'Download a completed export as a zip (owner/admin); 409 before completion, 410 once expired',
        description:
          'Owner/admin only. application/zip with one <resource>.ndjson or <resource>.csv per resource and a manifest.json. Before the export is completed → 409 INVALID_STATE; after it expired (7 days after completion) → 410 GONE.',
        params: IdParams,
        produces: ['application/zip'],
        response: { 200: ZipResponse },
      },
    },
    async (request, reply) => {
      const file = await inRequestTenant(database.db, request, (ctx) =>
        exportArchive(ctx, request.params.id, config.exportDir),
      );
      return reply
        .type('application/zip')
        .header('Content-Length', String(file.size))
        .header('Content-Disposition', `attachment; filename="${file.filename}"`)
        .send(file.stream);
    },
  );
}
