import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, Envelope, IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import { recordSmsConsent, smsConsentHistory } from './customers.consent.js';
import {
  CreateCustomerBody,
  CustomerList,
  CustomerListQuery,
  CustomerResponse,
  RecordSmsConsentBody,
  SmsConsentChange,
  UpdateCustomerBody,
} from './customers.schemas.js';
import {
  type CustomerView,
  changeCustomerStatus,
  createCustomer,
  getCustomer,
  listCustomers,
  softDeleteCustomer,
  updateCustomer,
} from './customers.service.js';
import { CUSTOMER_ACTIONS } from './customers.states.js';

/**
 * The flows (src/flows/) these routes start. src/modules/index.ts hands them in, so this
 * module never imports the layer above it.
 */
export interface CustomerFlows {
  /** src/flows/delete-referenced.ts: rows of other modules naming its jobs and invoices let go first. */
  deleteCustomer(ctx: Ctx, id: string): Promise<void>;
  anonymizeCustomer(ctx: Ctx, id: string): Promise<CustomerView>;
}

export default async function customerRoutes(fastify: FastifyInstance, { flows }: { flows: CustomerFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['customers'];
  const adminOnly = { roles: ['owner', 'admin'] } as const;

  app.get(
    '/api/customers',
    {
      schema: {
        tags,
        summary: 'List customers (newest first); Link rel="next" pages on, X-Total-Count with includeTotal=true',
        description:
          'Filter by `search` (name, email, phone), `tag` or `status`. Soft-deleted customers are not listed. Paginated like every list (see the README).',
        querystring: CustomerListQuery,
        response: { 200: CustomerList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const { search, tag, status } = request.query;
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listCustomers(ctx, { search, tag, status }, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/customers/:id',
    {
      schema: {
        tags,
        summary: 'One customer',
        description: "404 for a missing, soft-deleted or other organization's customer.",
        params: IdParams,
        response: { 200: CustomerResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => getCustomer(ctx, request.params.id)),
      };
    },
  );

  app.post(
    '/api/customers',
    {
      schema: {
        tags,
        summary: 'Create a customer (emits customer.created)',
        description: 'Only `name` is required. Unknown fields are refused with 400.',
        body: CreateCustomerBody,
        response: { 201: CustomerResponse },
      },
    },
    async (request, reply) => {
      const customer = await inRequestTenant(database.db, request, (ctx) => createCustomer(ctx, request.body));
      return reply.code(201).send({ data: customer });
    },
  );

  app.patch(
    '/api/customers/:id',
    {
      schema: {
        tags,
        summary: 'Update some fields of a customer; null clears an optional field (emits customer.updated)',
        description: 'Fields not sent keep their value. `name` cannot be cleared.',
        params: IdParams,
        body: UpdateCustomerBody,
        response: { 200: CustomerResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) =>
          updateCustomer(ctx, request.params.id, request.body),
        ),
      };
    },
  );

  app.delete(
    '/api/customers/:id',
    {
      schema: {
        tags,
        summary: 'Soft-delete a customer: hidden from lists and reads, attached records kept (emits customer.deleted)',
        description: 'Its invoices, estimates, jobs and contracts stay. Use hard-delete or anonymize to erase data.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => softDeleteCustomer(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  const ConsentHistory = Envelope(Type.Array(SmsConsentChange));
  app.get(
    '/api/customers/:id/sms-consent',
    {
      schema: {
        tags,
        summary: 'Every change of the customer’s SMS consent, oldest first (kept for the life of the customer)',
        description:
          'Each change with its source (staff, portal, keyword: STOP/START texted back or Twilio error 21610, request_form) and evidence; anonymizing keeps them.',
        params: IdParams,
        response: { 200: ConsentHistory },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => smsConsentHistory(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/customers/:id/sms-consent',
    {
      schema: {
        tags,
        summary: 'Record SMS consent collected by staff (source staff); answers the whole history, oldest first',
        description:
          'optedIn true → opted_in, false → opted_out, with the evidence of how it was collected. A status the customer already has records nothing. Emits customer.updated when it changes. Texts are sent only to opted_in customers.',
        params: IdParams,
        body: RecordSmsConsentBody,
        response: { 200: ConsentHistory },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, async (ctx) => {
        await recordSmsConsent(ctx, request.params.id, {
          status: request.body.optedIn ? 'opted_in' : 'opted_out',
          source: 'staff',
          evidence: request.body.evidence ?? null,
        });
        return smsConsentHistory(ctx, request.params.id);
      }),
    }),
  );

  for (const action of CUSTOMER_ACTIONS) {
    app.post(
      `/api/customers/:id/${action}`,
      {
        schema: {
          tags,
          summary:
            action === 'deactivate'
              ? 'Mark an active customer inactive (emits customer.updated); 409 if already inactive'
              : 'Mark an inactive customer active again (emits customer.updated); 409 if already active',
          description:
            action === 'deactivate'
              ? 'Inactive customers stay readable and listable (filter by status) but are meant for no new work.'
              : 'Undoes deactivate.',
          params: IdParams,
          body: EmptyBody,
          response: { 200: CustomerResponse },
        },
      },
      async (request) => {
        return {
          data: await inRequestTenant(database.db, request, (ctx) =>
            changeCustomerStatus(ctx, request.params.id, action),
          ),
        };
      },
    );
  }

  app.post(
    '/api/customers/:id/anonymize',
    {
      config: adminOnly,
      schema: {
        tags,
        summary:
          "Erase a customer's personal data irreversibly (owner/admin); documents and payments stay (emits customer.updated)",
        description:
          'Name becomes "Anonymized"; email, phones, billing address, notes, tags and additional emails are cleared, and so are the addresses, gate codes and notes of its properties. Also works on a soft-deleted customer. 409 if already anonymized.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: CustomerResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => flows.anonymizeCustomer(ctx, request.params.id)),
      };
    },
  );

  app.delete(
    '/api/customers/:id/hard-delete',
    {
      config: adminOnly,
      schema: {
        tags,
        summary:
          'Delete a customer and everything attached to it for good (owner/admin; emits customer.deleted with the id only)',
        description: 'Also works on a soft-deleted customer. One transaction: all or nothing.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteCustomer(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );
}
