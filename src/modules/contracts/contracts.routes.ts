import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams } from '../../platform/schemas.js';

import {
  ActivityListQuery,
  ActivityParams,
  AmendContractBody,
  ContractActivityResponse,
  ContractAnalyticsResponse,
  ContractDetailResponse,
  ContractListQuery,
  ContractListResponse,
  CreateContractBody,
  SentContractResponse,
  UpdateContractBody,
} from './contracts.schemas.js';
import {
  activityForContract,
  amendContract,
  cancelContract,
  contractAnalytics,
  createContract,
  getContract,
  listContracts,
  sendContract,
  updateContract,
} from './contracts.service.js';

export default async function contractRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const tags = ['contracts'];

  app.get(
    '/api/contracts',
    {
      schema: {
        tags,
        summary: 'List contracts, newest first',
        description: 'Paginated like every list (see the README); filter by status or customer.',
        querystring: ContractListQuery,
        response: { 200: ContractListResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listContracts(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/contracts/:id',
    {
      schema: {
        tags,
        summary: 'One contract with its full content, signature evidence and activity log',
        description: 'Signature evidence (name, time, IP, user agent) is present once signed.',
        params: IdParams,
        response: { 200: ContractDetailResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => getContract(ctx, request.params.id)),
      };
    },
  );

  app.post(
    '/api/contracts',
    {
      schema: {
        tags,
        summary: 'Create a draft contract (content filled from the template, if any)',
        description:
          "With `templateId`, the template's content is copied and its placeholders filled from the customer; otherwise `content` is required.",
        body: CreateContractBody,
        response: { 201: ContractDetailResponse },
      },
    },
    async (request, reply) => {
      const row = await inRequestTenant(database.db, request, (ctx) => createContract(ctx, request.body));
      return reply.code(201).send({ data: row });
    },
  );

  // PUT is the spec's name; PATCH is accepted too so every partial update has one verb.
  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/api/contracts/:id',
      {
        schema: {
          tags,
          summary: 'Partly update a draft contract (409 INVALID_STATE once sent)',
          description:
            'Only the fields sent change; a sent, signed, expired or canceled contract refuses with 409 INVALID_STATE.',
          params: IdParams,
          body: UpdateContractBody,
          response: { 200: ContractDetailResponse },
        },
      },
      async (request) => {
        return {
          data: await inRequestTenant(database.db, request, (ctx) =>
            updateContract(ctx, request.params.id, request.body),
          ),
        };
      },
    );
  }

  app.post(
    '/api/contracts/:id/send',
    {
      schema: {
        tags,
        summary: 'Send for signature: draft → sent (sent: re-send a fresh link); emails the portal link',
        description:
          'Emits contract.sent. The customer signs through the emailed portal link; the mail is queued and sent in the background, retried while the mail server refuses (`lastEmail` shows how it went).',
        params: IdParams,
        body: EmptyBody,
        response: { 200: SentContractResponse },
      },
    },
    async (request) => {
      const result = await inRequestTenant(database.db, request, (ctx) =>
        sendContract(ctx, request.params.id, config.baseUrl),
      );
      return { data: { ...result.contract, portalUrl: result.portalUrl } };
    },
  );

  app.post(
    '/api/contracts/:id/amendments',
    {
      schema: {
        tags,
        summary:
          'Amend a signed or active contract: creates a draft contract with amendsContractId, prefilled from the original (409 INVALID_STATE otherwise)',
        description:
          'Spec 3.4: a signed contract is never edited; changes go in an amendment. The amendment is a new draft contract for the same customer, prefilled from the original with the body’s overrides applied; it is sent and signed like any contract (portal signature evidence, contract.sent and contract.signed events). The original is not changed: it stays signed or active, its activity log records `amended` with the amendment’s id, and `GET /api/contracts/{id}` lists its amendments. Once signed, the amendment’s terms supersede the original’s from the amendment’s startDate.',
        params: IdParams,
        body: AmendContractBody,
        response: { 201: ContractDetailResponse },
      },
    },
    async (request, reply) => {
      const row = await inRequestTenant(database.db, request, (ctx) =>
        amendContract(ctx, request.params.id, request.body),
      );
      return reply.code(201).send({ data: row });
    },
  );

  app.post(
    '/api/contracts/:id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a contract from any state but expired or canceled',
        description: 'Refuses with 409 INVALID_STATE from expired or canceled. The portal link stops working.',
        params: IdParams,
        body: EmptyBody,
        response: { 200: ContractDetailResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => cancelContract(ctx, request.params.id)),
      };
    },
  );

  app.get(
    '/api/contract-analytics',
    {
      schema: {
        tags,
        summary: 'Contract metrics: totals by status, signing rate, average time to sign, active revenue',
        description: "Computed over the active organization's contracts at request time.",
        response: { 200: ContractAnalyticsResponse },
      },
    },
    async (request) => {
      return { data: await inRequestTenant(database.db, request, contractAnalytics) };
    },
  );

  app.get(
    '/api/contract-activity/:contract_id',
    {
      schema: {
        tags,
        summary: 'A contract’s activity log, oldest first',
        description: 'Every state change and view of the contract with its time and actor.',
        params: ActivityParams,
        querystring: ActivityListQuery,
        response: { 200: ContractActivityResponse },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        activityForContract(ctx, request.params.contract_id, page),
      );
      return sendPage(request, reply, page, result);
    },
  );
}
