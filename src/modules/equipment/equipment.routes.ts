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
        description: 'Every role may read equipment; paginated like every list.',
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
        description:
          'A plan is due once the hours or days since its last log (or since purchase or its creation) reach its interval. dueSince is the last log plus the interval; overdueFraction is (elapsed − interval) ÷ interval, largest first.',
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
        description:
          'Owner/admin only. serialNumber must be unique in the organization (409 CONFLICT); the item starts available.',
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
    {
      schema: {
        tags,
        summary: 'One item',
        description: 'Every role may read an item, with its status and hour meter.',
        params: IdParams,
        response: { 200: EquipmentResponse },
      },
    },
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
        description:
          'Owner/admin only. in_use is reached only by check-out and check-in; any other status move → 409 INVALID_STATE. A lower hourMeter → 400; a duplicate serialNumber → 409 CONFLICT.',
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
        description:
          'Owner/admin only. An item with any check-out or maintenance history → 409 CONFLICT; retire it with PATCH status retired instead.',
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
        description:
          'Only an available item can be checked out (in_use, maintenance or retired → 409 INVALID_STATE); it becomes in_use. memberId, crewId and jobId must belong to this organization, else 400.',
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
        description:
          'Only an in_use item can be checked in (409 INVALID_STATE otherwise); it becomes available. An hourMeter below the current reading, or at before the check-out → 400.',
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
        description: 'Every check-out of the item, including the one still open.',
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
        description:
          'Owner/admin only. Give exactly one of everyHours or everyDays, else 400; the plan appears in maintenance-due once its interval is reached.',
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
    {
      schema: {
        tags,
        summary: "An item's maintenance plans",
        description: 'Every role may read them.',
        params: IdParams,
        response: { 200: PlanList },
      },
    },
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
        description:
          'planId must be a plan of this item (else 400); the log restarts that plan interval. An hourMeter updates the item meter, which never goes down (400).',
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
        description: 'Every role may read it; each log has performedAt, hourMeter, cost, notes and planId.',
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
