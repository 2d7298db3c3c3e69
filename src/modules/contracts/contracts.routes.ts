import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams } from '../../platform/schemas.js';

import {
  ActivityListQuery,
  ActivityParams,
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
  const { database, mailer, config } = app.deps;
  const tags = ['contracts'];

  app.get(
    '/api/contracts',
    {
      schema: {
        tags,
        summary: 'List contracts, newest first',
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
        body: CreateContractBody,
        response: { 201: ContractDetailResponse },
      },
    },
    async (request, reply) => {
      const row = await inRequestTenant(database.db, request, (ctx) => createContract(ctx, request.body));
      return reply.code(201).send({ data: row });
    },
  );

  app.put(
    '/api/contracts/:id',
    {
      schema: {
        tags,
        summary: 'Partly update a draft contract (409 INVALID_STATE once sent)',
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

  app.post(
    '/api/contracts/:id/send',
    {
      schema: {
        tags,
        summary: 'Send for signature: draft → sent (sent: re-send a fresh link); emails the portal link',
        params: IdParams,
        body: EmptyBody,
        response: { 200: SentContractResponse },
      },
    },
    async (request) => {
      const result = await inRequestTenant(database.db, request, (ctx) =>
        sendContract(ctx, request.params.id, config.baseUrl),
      );
      if (result.mail) {
        try {
          await mailer.send(result.mail);
        } catch (err) {
          // The contract is sent and the link exists; the office can share portalUrl by hand.
          request.log.error({ err, contractId: request.params.id }, 'contract mail failed');
        }
      }
      return { data: { ...result.contract, portalUrl: result.portalUrl } };
    },
  );

  app.post(
    '/api/contracts/:id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a contract from any state but expired or canceled',
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
