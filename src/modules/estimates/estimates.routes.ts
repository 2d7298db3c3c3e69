import type { Static, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { PdfResponse, sendPdf } from '../../platform/pdf.js';
import { EmptyBody, IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import { SendDocumentBody } from '../billing/document-schemas.js';
import type { InvoiceDetailView } from '../invoices/invoices.service.js';
import type { createPricedJob } from '../jobs/jobs.service.js';
import { expandParties, expansionsOf } from '../properties/properties.expand.js';
import {
  ConvertedEstimateResponse,
  ConvertedToJobResponse,
  ConvertToJobBody,
  CreateEstimateBody,
  EstimateExpandQuery,
  EstimateListQuery,
  EstimateListResponse,
  EstimateResponse,
  SentEstimateResponse,
  UpdateEstimateBody,
} from './estimates.schemas.js';
import type { sendEstimate } from './estimates.service.js';
import {
  approveEstimate,
  createEstimate,
  declineEstimate,
  deleteEstimate,
  type EstimateView,
  estimatePdf,
  getEstimate,
  listEstimates,
  updateEstimate,
} from './estimates.service.js';

/**
 * The flows (src/flows/) these routes start. src/modules/index.ts hands them in, so this
 * module never imports the layer above it.
 */
export interface EstimateFlows {
  /** src/flows/send-document.ts: the send, and the link texted when channels hold "sms" (messages). */
  sendEstimate(
    ctx: Ctx,
    id: string,
    channels: Array<'email' | 'sms'>,
    config: Config,
  ): Promise<Awaited<ReturnType<typeof sendEstimate>> & { textedTo: string | null; textMessageId: string | null }>;
  convertEstimate(ctx: Ctx, id: string): Promise<{ estimate: EstimateView; invoice: InvoiceDetailView }>;
  convertEstimateToJob(
    ctx: Ctx,
    id: string,
    input: Static<typeof ConvertToJobBody>,
  ): Promise<{ estimate: EstimateView; job: Awaited<ReturnType<typeof createPricedJob>> }>;
}

export default async function estimateRoutes(fastify: FastifyInstance, { flows }: { flows: EstimateFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const tags = ['estimates'];

  app.get(
    '/api/estimates',
    {
      schema: {
        tags,
        summary: 'List estimates, newest first (filters: status, customerId)',
        description: 'Paginated like every list (see the README).',
        querystring: EstimateListQuery,
        response: { 200: EstimateListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, async (ctx) => {
        const found = await listEstimates(ctx, request.query, page);
        return { ...found, rows: await expandParties(ctx, found.rows, expansionsOf(request.query)) };
      });
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/estimates/:id',
    {
      schema: {
        tags,
        summary: 'One estimate with its lines',
        description: 'Totals are computed from the lines (money as numbers with two decimals).',
        params: IdParams,
        querystring: EstimateExpandQuery,
        response: { 200: EstimateResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, async (ctx) => {
          const [estimate] = await expandParties(
            ctx,
            [await getEstimate(ctx, request.params.id)],
            expansionsOf(request.query),
          );
          return estimate as Awaited<ReturnType<typeof getEstimate>>;
        }),
      };
    },
  );

  app.get(
    '/api/estimates/:id/pdf',
    {
      schema: {
        tags,
        summary: 'The estimate as a PDF (company details, customer, lines, tax, totals, status, validity)',
        description:
          'application/pdf, rendered on request; the same document is attached to the send mail and offered in the customer portal.',
        params: IdParams,
        produces: ['application/pdf'],
        response: { 200: PdfResponse },
      },
    },
    async (request, reply) => {
      const source = await inRequestTenant(database.db, request, (ctx) => estimatePdf(ctx, request.params.id));
      return sendPdf(reply, source);
    },
  );

  app.post(
    '/api/estimates',
    {
      schema: {
        tags,
        summary: 'Create a draft estimate (emits estimate.created)',
        description:
          "Lines carry quantity and unit price; totals and tax are computed. The number is assigned from the organization's sequence.",
        body: CreateEstimateBody,
        response: { 201: EstimateResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) => createEstimate(ctx, request.body));
      return reply.code(201).send({ data });
    },
  );

  // PUT is the spec's name; PATCH is accepted too so every partial update has one verb.
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/api/estimates/:id',
      {
        schema: {
          tags,
          summary: 'Change an estimate (partial): anything while draft; sent/viewed only expirationDate and notes',
          description:
            'PUT and PATCH behave the same. Sending `lines` replaces every line. 409 INVALID_STATE for a change the status does not allow.',
          params: IdParams,
          body: UpdateEstimateBody,
          response: { 200: EstimateResponse },
        },
      },
      async (request) => {
        return {
          data: await inRequestTenant(database.db, request, (ctx) =>
            updateEstimate(ctx, request.params.id, request.body),
          ),
        };
      },
    );
  }

  app.delete(
    '/api/estimates/:id',
    {
      schema: {
        tags,
        summary: 'Delete a draft estimate (409 otherwise)',
        description: 'Only drafts can be deleted; decline or let a sent estimate expire instead.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deleteEstimate(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/estimates/:id/send',
    {
      schema: {
        tags,
        summary: 'Email and/or text the estimate’s portal link (draft → sent; re-sends keep sent/viewed)',
        description:
          'Emits estimate.sent on the first send. `channels` (default ["email"]): "email" queues the mail (with the PDF), sent in the background, retried while the mail server refuses (`lastEmail` shows how it went); "sms" queues a text with the link (kind estimate_link, held by the quiet hours, sent once by the worker). A customer who cannot be texted → 409 naming what is missing, and nothing is sent or written.',
        params: IdParams,
        body: SendDocumentBody,
        response: { 200: SentEstimateResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) =>
          flows.sendEstimate(ctx, request.params.id, request.body?.channels ?? ['email'], config),
        ),
      };
    },
  );

  for (const [action, run, summary, description] of [
    [
      'approve',
      approveEstimate,
      'Record the customer’s approval (sent or viewed → approved)',
      'For approvals received outside the portal. Emits estimate.accepted and estimate.status_changed.',
    ],
    [
      'decline',
      declineEstimate,
      'Record the customer’s refusal (sent or viewed → declined)',
      'For refusals received outside the portal. Emits estimate.declined and estimate.status_changed.',
    ],
  ] as const) {
    app.post(
      `/api/estimates/:id/${action}`,
      {
        schema: { tags, summary, description, params: IdParams, body: EmptyBody, response: { 200: EstimateResponse } },
      },
      async (request) => {
        return { data: await inRequestTenant(database.db, request, (ctx) => run(ctx, request.params.id)) };
      },
    );
  }

  app.post(
    '/api/estimates/:id/convert',
    {
      schema: {
        tags,
        summary: 'Convert into a draft invoice with the same lines (any status but converted)',
        description: 'Returns the converted estimate (with invoiceId) and the new invoice.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: ConvertedEstimateResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => flows.convertEstimate(ctx, request.params.id)),
      };
    },
  );

  app.post(
    '/api/estimates/:id/convert-to-job',
    {
      schema: {
        tags,
        summary: 'Turn an approved estimate into a job with its lines, customer and property',
        description:
          'Approved estimates only (else 409 INVALID_STATE); the estimate records jobId and stays approved; a second conversion → 409 CONFLICT. Bill the job later with POST /api/invoices/from-jobs.',
        params: IdParams,
        body: ConvertToJobBody,
        response: { 201: ConvertedToJobResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) =>
        flows.convertEstimateToJob(ctx, request.params.id, request.body),
      );
      return reply.code(201).send({ data });
    },
  );
}
