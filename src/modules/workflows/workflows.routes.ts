import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { IdParams, NoContent } from '../../platform/schemas.js';
import {
  CreateWorkflowBody,
  RunList,
  RunListQuery,
  UpdateWorkflowBody,
  WorkflowList,
  WorkflowListQuery,
  WorkflowResponse,
} from './workflows.schemas.js';
import {
  createWorkflow,
  deleteWorkflow,
  getWorkflow,
  listRuns,
  listWorkflows,
  updateWorkflow,
} from './workflows.service.js';

const RULES =
  'Runs in the worker after the trigger event commits (a rolled-back change triggers nothing), at least once with each action done once per run; a trigger whose conditions fail records no run. Workflows run only for events of depth < 3: events caused by a workflow action carry the run’s depth + 1.';

/** `/api/workflows` (operations.md §7): owner/admin on every route. */
export default async function workflowRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['workflows'];
  const config = { roles: ['owner', 'admin'] } as const;

  app.get(
    '/api/workflows',
    {
      config,
      schema: {
        tags,
        summary: 'List workflows (newest first), by active flag or trigger (owner/admin)',
        description: `Owner/admin only. Paginated like every list. ${RULES}`,
        querystring: WorkflowListQuery,
        response: { 200: WorkflowList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listWorkflows(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.post(
    '/api/workflows',
    {
      config,
      schema: {
        tags,
        summary: 'Define a workflow (owner/admin); a name already used → 409 CONFLICT',
        description:
          'Owner/admin only. trigger.event is a catalog event; conditions [{field, op, value}] are dotted paths into the event data checked against the event’s data shape (an unknown path → 400); 1..10 actions: emit (sends workflow.<name>, delivered only to endpoints that name it), email (to: customer or an address; {{dotted.path}} placeholders), add_customer_tag, create_job (scheduled, today + daysFromNow). ' +
          RULES,
        body: CreateWorkflowBody,
        response: { 201: WorkflowResponse },
      },
    },
    async (request, reply) => {
      const wf = await inRequestTenant(database.db, request, (ctx) => createWorkflow(ctx, request.body));
      return reply.code(201).send({ data: wf });
    },
  );

  app.get(
    '/api/workflows/:id',
    {
      config,
      schema: {
        tags,
        summary: 'One workflow (owner/admin)',
        description: 'Owner/admin only. The definition as stored.',
        params: IdParams,
        response: { 200: WorkflowResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getWorkflow(ctx, request.params.id)),
    }),
  );

  app.patch(
    '/api/workflows/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Change a workflow (owner/admin); active: false pauses it',
        description:
          'Owner/admin only. The merged definition is validated as a whole (a new trigger re-checks the kept conditions); a name already used → 409 CONFLICT. Runs already recorded keep the definition they started with.',
        params: IdParams,
        body: UpdateWorkflowBody,
        response: { 200: WorkflowResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => updateWorkflow(ctx, request.params.id, request.body)),
    }),
  );

  app.delete(
    '/api/workflows/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Delete a workflow and its run history (owner/admin)',
        description: 'Owner/admin only. Runs not yet finished are dropped with it.',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => deleteWorkflow(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/workflows/:id/runs',
    {
      config,
      schema: {
        tags,
        summary: 'The runs of a workflow, newest first (owner/admin)',
        description:
          'Owner/admin only. Each run: the trigger event, status pending | succeeded | failed (failed when any action failed), and one result per action done so far (succeeded | failed | skipped, with error).',
        params: IdParams,
        querystring: RunListQuery,
        response: { 200: RunList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) =>
        listRuns(ctx, request.params.id, request.query, page),
      );
      return sendPage(request, reply, page, result);
    },
  );
}
