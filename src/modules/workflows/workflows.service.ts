import { and, eq, type SQL } from 'drizzle-orm';
import { sqlStateOf } from '../../db/pg-errors.js';
import { workflowRuns, workflows } from '../../db/schema/index.js';
import { AppError, type FieldIssue } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { ownedRows } from '../../platform/owned-rows.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import type {
  ActionDef,
  ActionResultT,
  ConditionDef,
  CreateWorkflowInput,
  RunStatus,
  UpdateWorkflowInput,
} from './workflows.schemas.js';
import { pathProblem } from './workflows.shapes.js';

export type WorkflowRow = typeof workflows.$inferSelect;
export type RunRow = typeof workflowRuns.$inferSelect;

export function workflowView(r: WorkflowRow) {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    trigger: { event: r.triggerEvent as CreateWorkflowInput['trigger']['event'] },
    conditions: r.conditions as ConditionDef[],
    actions: r.actions as ActionDef[],
    active: r.active,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

export function runView(r: RunRow) {
  return {
    id: r.id,
    workflowId: r.workflowId,
    eventId: r.eventId,
    event: r.eventType,
    depth: r.depth,
    status: r.status as RunStatus,
    actions: r.actions as ActionResultT[],
    createdAt: r.createdAt,
    finishedAt: r.finishedAt,
  };
}

/**
 * What JSON Schema cannot say about a definition: condition paths against the
 * trigger's data shape (workflows.shapes.ts) and value types per operator. Every problem is reported at once; nothing is written on any.
 */
function checkDefinition(trigger: string, conditions: readonly ConditionDef[]) {
  const issues: FieldIssue[] = [];
  conditions.forEach((c, i) => {
    const problem = pathProblem(trigger, c.field);
    if (problem) issues.push({ field: `conditions[${i}].field`, message: problem });
    if (c.op === 'in') {
      if (!Array.isArray(c.value)) issues.push({ field: `conditions[${i}].value`, message: 'in takes an array' });
    } else if (Array.isArray(c.value)) {
      issues.push({ field: `conditions[${i}].value`, message: `${c.op} takes a single value, not an array` });
    } else if (
      ['gt', 'gte', 'lt', 'lte'].includes(c.op) &&
      typeof c.value !== 'number' &&
      typeof c.value !== 'string'
    ) {
      issues.push({ field: `conditions[${i}].value`, message: `${c.op} compares a number or a string` });
    }
  });
  if (issues.length > 0) {
    throw new AppError('VALIDATION_FAILED', issues.map((x) => `${x.field}: ${x.message}`).join('; '), {
      details: issues,
    });
  }
}

const normalizeActions = (actions: ActionDef[]): ActionDef[] =>
  actions.map((a) => {
    switch (a.type) {
      case 'email':
        return { ...a, to: a.to === 'customer' ? a.to : a.to.toLowerCase() };
      case 'add_customer_tag':
        return { ...a, tag: a.tag.trim() };
      case 'create_job':
        return { ...a, title: a.title.trim() };
      default:
        return { type: a.type };
    }
  });

const duplicateName = (name: string) =>
  new AppError('CONFLICT', `A workflow named "${name}" already exists in this organization`);

async function writing<T>(name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (sqlStateOf(err) === '23505') throw duplicateName(name);
    throw err;
  }
}

const { mine, find: loadWorkflow } = ownedRows(workflows, 'Workflow');

export async function createWorkflow(ctx: Ctx, input: CreateWorkflowInput) {
  const conditions = input.conditions ?? [];
  checkDefinition(input.trigger.event, conditions);
  const now = new Date();
  const [row] = await writing(input.name, () =>
    ctx.tx
      .insert(workflows)
      .values({
        id: newId('wfl'),
        organizationId: ctx.organizationId,
        name: input.name,
        description: input.description ?? null,
        triggerEvent: input.trigger.event,
        conditions,
        actions: normalizeActions(input.actions),
        active: input.active ?? true,
        createdAt: now,
        updatedAt: now,
      })
      .returning(),
  );
  return workflowView(row as WorkflowRow);
}

export async function getWorkflow(ctx: Ctx, id: string) {
  return workflowView(await loadWorkflow(ctx, id));
}

export async function listWorkflows(
  ctx: Ctx,
  f: { active?: 'true' | 'false' | undefined; triggerEvent?: string | undefined },
  page: Page,
) {
  const where: SQL[] = [eq(workflows.organizationId, ctx.organizationId)];
  if (f.active !== undefined) where.push(eq(workflows.active, f.active === 'true'));
  if (f.triggerEvent !== undefined) where.push(eq(workflows.triggerEvent, f.triggerEvent));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, workflows, and(...where), page);
  return { rows: rows.map(workflowView), ...more };
}

/** PATCH: the merged definition is validated as a whole (a new trigger re-checks the kept conditions). */
export async function updateWorkflow(ctx: Ctx, id: string, input: UpdateWorkflowInput) {
  const current = await loadWorkflow(ctx, id, true);
  const trigger = input.trigger?.event ?? current.triggerEvent;
  const conditions = input.conditions ?? (current.conditions as ConditionDef[]);
  const actions = input.actions ?? (current.actions as ActionDef[]);
  checkDefinition(trigger, conditions);
  const name = input.name ?? current.name;
  const [row] = await writing(name, () =>
    ctx.tx
      .update(workflows)
      .set({
        name,
        ...(input.description !== undefined ? { description: input.description } : {}),
        triggerEvent: trigger,
        conditions,
        actions: normalizeActions(actions),
        ...(input.active !== undefined ? { active: input.active } : {}),
        updatedAt: new Date(),
      })
      .where(mine(ctx, id))
      .returning(),
  );
  return workflowView(row as WorkflowRow);
}

/** Deletes the definition and its run history; runs already pending are dropped with it. */
export async function deleteWorkflow(ctx: Ctx, id: string) {
  await loadWorkflow(ctx, id, true);
  await ctx.tx.delete(workflows).where(mine(ctx, id));
}

export async function listRuns(ctx: Ctx, workflowId: string, f: { status?: RunStatus | undefined }, page: Page) {
  await loadWorkflow(ctx, workflowId);
  const where: SQL[] = [eq(workflowRuns.organizationId, ctx.organizationId), eq(workflowRuns.workflowId, workflowId)];
  if (f.status !== undefined) where.push(eq(workflowRuns.status, f.status));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, workflowRuns, and(...where), page);
  return { rows: rows.map(runView), ...more };
}

/** The conditions as the evaluator takes them. */
