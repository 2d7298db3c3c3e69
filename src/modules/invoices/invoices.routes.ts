import type { Static, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { PdfResponse, sendPdf } from '../../platform/pdf.js';
import { EmptyBody, IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import { SendDocumentBody } from '../billing/document-schemas.js';
import { expandParties, expansionsOf } from '../properties/properties.expand.js';
import {
  BatchInvoicesBody,
  CreateInvoiceBody,
  FromJobsBody,
  InvoiceExpandQuery,
  InvoiceListQuery,
  InvoiceListResponse,
  InvoiceResponse,
  InvoicesMadeResponse,
  PaymentBody,
  SentInvoiceResponse,
  UpdateInvoiceBody,
} from './invoices.schemas.js';
import type { sendInvoice } from './invoices.service.js';
import {
  createInvoice,
  getInvoice,
  type InvoiceDetailView,
  invoicePdf,
  listInvoices,
  type SendDeps,
  updateInvoice,
  voidInvoice,
  writeOffInvoice,
} from './invoices.service.js';

/**
 * The flows (src/flows/) these routes start. src/modules/index.ts hands them in, so this
 * module never imports the layer above it.
 */
export interface InvoiceFlows {
  /** src/flows/send-document.ts: the send, and the link texted when channels hold "sms" (messages). */
  sendInvoice(
    ctx: Ctx,
    id: string,
    channels: Array<'email' | 'sms'>,
    config: Config,
  ): Promise<Awaited<ReturnType<typeof sendInvoice>> & { textedTo: string | null; textMessageId: string | null }>;
  /** src/flows/delete-referenced.ts: jobs, estimates and winter visits naming the draft let go first. */
  deleteInvoice(ctx: Ctx, id: string): Promise<void>;
  recordPayment(ctx: Ctx, invoiceId: string, input: Static<typeof PaymentBody>): Promise<InvoiceDetailView>;
  invoicesFromJobs(
    ctx: Ctx,
    jobIds: string[],
    opts: { send?: boolean | undefined },
    deps: SendDeps,
  ): Promise<InvoiceDetailView[]>;
  batchInvoices(ctx: Ctx, input: Static<typeof BatchInvoicesBody>, deps: SendDeps): Promise<InvoiceDetailView[]>;
}

export default async function invoiceRoutes(fastify: FastifyInstance, { flows }: { flows: InvoiceFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const tags = ['invoices'];

  app.get(
    '/api/invoices',
    {
      schema: {
        tags,
        summary: 'List invoices, newest first (filters: status, customerId, invoiceDate range)',
        description: 'Paginated like every list (see the README).',
        querystring: InvoiceListQuery,
        response: { 200: InvoiceListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, async (ctx) => {
        const found = await listInvoices(ctx, request.query, page);
        return { ...found, rows: await expandParties(ctx, found.rows, expansionsOf(request.query)) };
      });
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/invoices/:id',
    {
      schema: {
        tags,
        summary: 'One invoice with its lines and payments',
        description: '`balance` is total minus payments; money as numbers with two decimals.',
        params: IdParams,
        querystring: InvoiceExpandQuery,
        response: { 200: InvoiceResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, async (ctx) => {
          const [invoice] = await expandParties(
            ctx,
            [await getInvoice(ctx, request.params.id)],
            expansionsOf(request.query),
          );
          return invoice as Awaited<ReturnType<typeof getInvoice>>;
        }),
      };
    },
  );

  app.get(
    '/api/invoices/:id/pdf',
    {
      schema: {
        tags,
        summary: 'The invoice as a PDF (company details, customer, lines, tax, totals, payments, status, due date)',
        description:
          'application/pdf, rendered on request with the fonts shipped in the package; the same document is attached to the send mail and offered in the customer portal.',
        params: IdParams,
        produces: ['application/pdf'],
        response: { 200: PdfResponse },
      },
    },
    async (request, reply) => {
      const source = await inRequestTenant(database.db, request, (ctx) => invoicePdf(ctx, request.params.id));
      return sendPdf(reply, source);
    },
  );

  app.post(
    '/api/invoices',
    {
      schema: {
        tags,
        summary: 'Create a draft invoice (emits invoice.created)',
        description:
          "Lines carry quantity and unit price; totals and tax are computed. The number is assigned from the organization's sequence.",
        body: CreateInvoiceBody,
        response: { 201: InvoiceResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) => createInvoice(ctx, request.body));
      return reply.code(201).send({ data });
    },
  );

  // PUT is the spec's name; PATCH is accepted too so every partial update has one verb.
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/api/invoices/:id',
      {
        schema: {
          tags,
          summary: 'Change an invoice (partial): anything while draft, then only dueDate and notes',
          description:
            'PUT and PATCH behave the same. Sending `lines` replaces every line. 409 INVALID_STATE for a change the status does not allow.',
          params: IdParams,
          body: UpdateInvoiceBody,
          response: { 200: InvoiceResponse },
        },
      },
      async (request) => {
        return {
          data: await inRequestTenant(database.db, request, (ctx) =>
            updateInvoice(ctx, request.params.id, request.body),
          ),
        };
      },
    );
  }

  app.delete(
    '/api/invoices/:id',
    {
      schema: {
        tags,
        summary: 'Delete a draft invoice (409 otherwise)',
        description: 'Sent invoices are kept for the record: void them instead.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteInvoice(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/invoices/:id/payments',
    {
      schema: {
        tags,
        summary: 'Record a payment (draft, sent, partially paid or overdue; at most the balance)',
        description:
          'Emits payment.received, and invoice.paid when the balance reaches zero. An amount above the balance is refused with 400.',
        params: IdParams,
        body: PaymentBody,
        response: { 201: InvoiceResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) =>
        flows.recordPayment(ctx, request.params.id, request.body),
      );
      return reply.code(201).send({ data });
    },
  );

  app.post(
    '/api/invoices/:id/send',
    {
      schema: {
        tags,
        summary: 'Email and/or text the invoice’s portal link (draft → sent; re-sends keep the status)',
        description:
          'Emits invoice.sent on the first send. `channels` (default ["email"]): "email" queues the mail (with the PDF), sent in the background, retried while the mail server refuses (`lastEmail` shows how it went); "sms" queues a text with the link (kind invoice_link, held by the quiet hours, sent once by the worker). A customer who cannot be texted → 409 naming what is missing, and nothing is sent or written.',
        params: IdParams,
        body: SendDocumentBody,
        response: { 200: SentInvoiceResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) =>
          flows.sendInvoice(ctx, request.params.id, request.body?.channels ?? ['email'], config),
        ),
      };
    },
  );

  app.post(
    '/api/invoices/:id/void',
    {
      schema: {
        tags,
        summary: 'Void the invoice (from any status but void)',
        description: 'Emits invoice.voided and invoice.status_changed. Payments already recorded stay.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: InvoiceResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => voidInvoice(ctx, request.params.id)),
      };
    },
  );

  app.post(
    '/api/invoices/:id/write-off',
    {
      schema: {
        tags,
        summary: 'Write the invoice off as bad debt (sent, partially paid or overdue)',
        description: 'Emits invoice.written_off and invoice.status_changed.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: InvoiceResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => writeOffInvoice(ctx, request.params.id)),
      };
    },
  );

  app.post(
    '/api/invoices/from-jobs',
    {
      schema: {
        tags,
        summary: 'Bill completed jobs: one draft invoice per customer, one line per job line',
        description:
          'All or nothing: every job must be completed, priced and unbilled; each gets invoiceId. Two concurrent calls bill a job once (the second answers 409 CONFLICT). Tax, numbering, events and ledger as for any invoice.',
        body: FromJobsBody,
        response: { 201: InvoicesMadeResponse },
      },
    },
    async (request, reply) => {
      const deps = { baseUrl: config.baseUrl };
      const invoices = await inRequestTenant(database.db, request, (ctx) =>
        flows.invoicesFromJobs(ctx, request.body.jobIds, { send: request.body.send }, deps),
      );
      return reply.code(201).send({ data: { invoices } });
    },
  );

  app.post(
    '/api/invoices/batch',
    {
      schema: {
        tags,
        summary: 'Batch invoicing: the completed, unbilled, priced jobs completed from..to, one invoice per customer',
        description:
          'Dates are calendar dates in the organization’s timezone, both included; `from` after `to` → 400. Jobs without lines are left out. Answers the invoices made (possibly none).',
        body: BatchInvoicesBody,
        response: { 201: InvoicesMadeResponse },
      },
    },
    async (request, reply) => {
      const deps = { baseUrl: config.baseUrl };
      const invoices = await inRequestTenant(database.db, request, (ctx) =>
        flows.batchInvoices(ctx, request.body, deps),
      );
      return reply.code(201).send({ data: { invoices } });
    },
  );
}
