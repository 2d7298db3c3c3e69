import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent, PageQuery } from '../../platform/schemas.js';
import { checkIn, checkOut, listAssignments } from './equipment.assignments.js';
import { createLog, createPlan, listLogs, listPlans, maintenanceDue } from './equipment.maintenance.js';
import {
  AssignmentList,
  CheckInBody,
  CheckOutBody,
  CreateEquipmentBody,
  CreateLogBody,
  CreatePlanBody,
  DueList,
  EquipmentList,
  EquipmentListQuery,
  EquipmentResponse,
  LogList,
  LogResponse,
  PlanList,
  PlanResponse,
  UpdateEquipmentBody,
} from './equipment.schemas.js';
import { createEquipment, deleteEquipment, getEquipment, listEquipment, updateEquipment } from './equipment.service.js';

const PageOnly = Type.Object({ ...PageQuery }, { additionalProperties: false });

/** `/api/equipment` (operations.md §5). Owner/admin manage items and plans; every role checks out, in and logs. */
export default async function equipmentRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['equipment'];
  const admin = { roles: ['owner', 'admin'] } as const;

  app.get(
    '/api/equipment',
    {
      schema: {
        tags,
        summary: 'List equipment (newest first), by status or category',
        querystring: EquipmentListQuery,
        response: { 200: EquipmentList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listEquipment(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/equipment/maintenance-due',
    {
      schema: {
        tags,
        summary: 'Maintenance plans that are due, most overdue first (retired items left out)',
        response: { 200: DueList },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, (ctx) => maintenanceDue(ctx)) }),
  );

  app.post(
    '/api/equipment',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Add an item (owner/admin); a serial number already used → 409 CONFLICT',
        body: CreateEquipmentBody,
        response: { 201: EquipmentResponse },
      },
    },
    async (request, reply) => {
      const item = await inRequestTenant(database.db, request, (ctx) => createEquipment(ctx, request.body));
      return reply.code(201).send({ data: item });
    },
  );

  app.get(
    '/api/equipment/:id',
    { schema: { tags, summary: 'One item', params: IdParams, response: { 200: EquipmentResponse } } },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getEquipment(ctx, request.params.id)),
    }),
  );

  app.patch(
    '/api/equipment/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Update an item (owner/admin); status: maintenance, retired or back to available',
        params: IdParams,
        body: UpdateEquipmentBody,
        response: { 200: EquipmentResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => updateEquipment(ctx, request.params.id, request.body)),
    }),
  );

  app.delete(
    '/api/equipment/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete an item without history (owner/admin); with history → 409, retire it instead',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deleteEquipment(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/equipment/:id/check-out',
    {
      schema: {
        tags,
        summary: 'Check an available item out to a member, crew or job (otherwise 409 INVALID_STATE)',
        params: IdParams,
        body: CheckOutBody,
        response: { 200: EquipmentResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => checkOut(ctx, request.params.id, request.body)),
    }),
  );

  app.post(
    '/api/equipment/:id/check-in',
    {
      schema: {
        tags,
        summary: 'Check an item in (from in_use only) with its hour meter, which never goes down',
        params: IdParams,
        body: CheckInBody,
        response: { 200: EquipmentResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => checkIn(ctx, request.params.id, request.body)),
    }),
  );

  app.get(
    '/api/equipment/:id/assignments',
    {
      schema: {
        tags,
        summary: 'Check-out history of an item, newest first',
        params: IdParams,
        querystring: PageOnly,
        response: { 200: AssignmentList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listAssignments(ctx, request.params.id, page),
      );
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    '/api/equipment/:id/maintenance-plans',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Add a maintenance plan: every N hours or every N days (exactly one)',
        params: IdParams,
        body: CreatePlanBody,
        response: { 201: PlanResponse },
      },
    },
    async (request, reply) => {
      const plan = await inRequestTenant(database.db, request, (ctx) =>
        createPlan(ctx, request.params.id, request.body),
      );
      return reply.code(201).send({ data: plan });
    },
  );

  app.get(
    '/api/equipment/:id/maintenance-plans',
    { schema: { tags, summary: "An item's maintenance plans", params: IdParams, response: { 200: PlanList } } },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => listPlans(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/equipment/:id/maintenance',
    {
      schema: {
        tags,
        summary: 'Log maintenance work (optionally fulfilling a plan)',
        params: IdParams,
        body: CreateLogBody,
        response: { 201: LogResponse },
      },
    },
    async (request, reply) => {
      const log = await inRequestTenant(database.db, request, (ctx) => createLog(ctx, request.params.id, request.body));
      return reply.code(201).send({ data: log });
    },
  );

  app.get(
    '/api/equipment/:id/maintenance',
    {
      schema: {
        tags,
        summary: "An item's maintenance log, newest first",
        params: IdParams,
        querystring: PageOnly,
        response: { 200: LogList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listLogs(ctx, request.params.id, page));
      return sendPage(request, reply, page, result);
    },
  );
}
