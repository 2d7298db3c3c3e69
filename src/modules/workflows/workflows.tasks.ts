import { and, eq, inArray, sql } from 'drizzle-orm';
import type { TaskContext, WorkerTask } from '../../background/runner.js';
import { type Database, rowsOf } from '../../db/client.js';
import { events, workflowRuns, workflows } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { doneMatching, eventsToMatch } from '../../platform/events/outbox.js';
import { newId } from '../../platform/ids.js';
import { take } from '../../platform/state-machine.js';
import { inTenant, systemActor } from '../../platform/tenancy.js';
import { type RunDefinition, runAction, type TriggerEvent } from './workflows.actions.js';
import { type Condition, matches } from './workflows.conditions.js';
import type { ActionDef, ActionResultT, RunStatus } from './workflows.schemas.js';
import { workflowRunMachine } from './workflows.states.js';

/** Workflows run only for events of depth < 3 (operations.md §7): the loop guard. */
export const MAX_DEPTH = 3;
/** A run that keeps crashing (not an action failing: that is recorded) is given up after this many claims. */
export const MAX_ATTEMPTS = 10;
const DEFAULT_LEASE_MS = 60_000;
const RUN_BATCH = 20;

export interface WorkflowTaskOptions {
  pollMs?: number;
  /** How long a claimed run is held before another worker may resume it. */
  leaseMs?: number;
  /**
   * Tests: called after each action's result has committed. Throwing here is a crash
   * between two actions (the process died): the run stays pending and is resumed.
   */
  afterAction?: (runId: string, index: number) => void | Promise<void>;
}

/**
 * Pass 1, across tenants (asPlatform): takes the outbox's events this engine has not matched
 * yet (its own batches of them, `eventsToMatch`), matches them against the active workflows of
 * their organization and trigger, records a pending run for each workflow whose conditions hold
 * (unique per workflow and event, so a repeated pass records nothing twice) and marks the
 * batches read (`doneMatching`), all in one transaction: a crash leaves the batches as they
 * were and the next pass redoes them. Only committed events exist here, so a rolled-back change
 * never triggers anything. Returns the batches read (the runner loops while there are some).
 */
export async function discoverRuns(database: Database): Promise<number> {
  return asPlatform(database.db, async (tx) => {
    const { events: batch, batches } = await eventsToMatch(tx);
    if (batches.length === 0) return 0;
    const candidates = batch.filter((e) => e.depth < MAX_DEPTH);
    if (candidates.length > 0) {
      const defs = await tx
        .select()
        .from(workflows)
        .where(
          and(
            inArray(workflows.organizationId, [...new Set(candidates.map((e) => e.organizationId))]),
            inArray(workflows.triggerEvent, [...new Set(candidates.map((e) => e.type))]),
            eq(workflows.active, true),
          ),
        );
      const runs: (typeof workflowRuns.$inferInsert)[] = [];
      for (const e of candidates) {
        for (const wf of defs) {
          if (wf.organizationId !== e.organizationId || wf.triggerEvent !== e.type) continue;
          if (!matches(wf.conditions as Condition[], e.data)) continue;
          runs.push({
            id: newId('wfr'),
            organizationId: e.organizationId,
            workflowId: wf.id,
            eventId: e.id,
            eventType: e.type,
            definition: { name: wf.name, actions: wf.actions },
            depth: e.depth,
          });
        }
      }
      if (runs.length > 0) await tx.insert(workflowRuns).values(runs).onConflictDoNothing();
    }
    await doneMatching(tx, batches);
    return batches.length;
  });
}

/** Pass 2, across tenants: claims pending runs whose lease is free (FOR UPDATE SKIP LOCKED). */
async function claimRuns(database: Database, leaseMs: number, limit: number) {
  return asPlatform(database.db, async (tx) => {
    // A run that crashed its worker MAX_ATTEMPTS times is given up, visibly.
    await tx.execute(sql`
      UPDATE workflow_runs SET status = ${take(workflowRunMachine, 'pending', 'give_up')}, finished_at = now(), updated_at = now()
      WHERE status = 'pending' AND attempts >= ${MAX_ATTEMPTS} AND (locked_until IS NULL OR locked_until < now())`);
    const result = await tx.execute(sql`
      UPDATE workflow_runs SET locked_until = now() + make_interval(secs => ${leaseMs / 1000}),
        attempts = attempts + 1
      WHERE (organization_id, id) IN (
        SELECT organization_id, id FROM workflow_runs
        WHERE status = 'pending' AND (locked_until IS NULL OR locked_until < now())
        ORDER BY created_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id, organization_id`);
    return rowsOf<{ id: string; organization_id: string }>(result).map((r) => ({
      id: r.id,
      organizationId: r.organization_id,
    }));
  });
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err)).slice(0, 500);

/**
 * Runs one claimed run to its end, one action per tenant transaction as the system
 * actor `workflows`: the run row is locked, the next action (index = results so far)
 * runs in a savepoint, and its result is appended to the run in the same transaction
 * as its effect. So after a crash the run resumes at the first action without a
 * result: a job is never created twice and a tag never added twice. Events the
 * actions cause carry the trigger's depth + 1.
 */
export async function executeRun(
  database: Database,
  ref: { id: string; organizationId: string },
  afterAction?: WorkflowTaskOptions['afterAction'],
  leaseMs = DEFAULT_LEASE_MS,
): Promise<void> {
  for (;;) {
    const step = await inTenant(database.db, ref.organizationId, systemActor('workflows'), async (base) => {
      const [run] = await base.tx
        .select()
        .from(workflowRuns)
        .where(and(eq(workflowRuns.organizationId, ref.organizationId), eq(workflowRuns.id, ref.id)))
        .for('update');
      if (run?.status !== 'pending') return { done: true, index: -1 };
      const definition = run.definition as { name: string; actions: ActionDef[] };
      const results = run.actions as ActionResultT[];
      const index = results.length;
      const finish = async (list: ActionResultT[]) => {
        const last = list.length >= definition.actions.length;
        await base.tx
          .update(workflowRuns)
          .set({
            actions: list,
            status: take(
              workflowRunMachine,
              run.status as RunStatus,
              last ? (list.some((r) => r.status === 'failed') ? 'fail' : 'succeed') : 'advance',
            ),
            ...(last ? { finishedAt: new Date() } : {}),
            // Each finished action renews the lease, so a long run is not taken over while it progresses.
            lockedUntil: new Date(Date.now() + leaseMs),
            updatedAt: new Date(),
          })
          .where(and(eq(workflowRuns.organizationId, ref.organizationId), eq(workflowRuns.id, ref.id)));
        return last;
      };
      const action = definition.actions[index];
      if (!action) return { done: await finish(results), index: -1 };
      const [event] = await base.tx
        .select({ id: events.id, type: events.type, data: events.data })
        .from(events)
        .where(and(eq(events.organizationId, ref.organizationId), eq(events.id, run.eventId)));
      const trigger: TriggerEvent = {
        id: run.eventId,
        type: run.eventType,
        data: (event?.data ?? {}) as Record<string, unknown>,
      };
      const def: RunDefinition = { workflowId: run.workflowId, name: definition.name, actions: definition.actions };
      let result: ActionResultT;
      try {
        // A savepoint: a failing action's writes are undone, the run's bookkeeping is not.
        result = await base.tx.transaction((sp) =>
          runAction({ ...base, tx: sp, eventDepth: run.depth + 1 }, def, trigger, action),
        );
      } catch (err) {
        result = { type: action.type, status: 'failed', error: errorText(err) };
      }
      return { done: await finish([...results, result]), index };
    });
    if (step.index >= 0) await afterAction?.(ref.id, step.index);
    if (step.done) return;
  }
}

/** One bounded pass of the workflows worker: discover, then run what is pending. */
export async function processWorkflows(
  database: Database,
  opts: WorkflowTaskOptions & { log?: TaskContext['log'] } = {},
): Promise<number> {
  const found = await discoverRuns(database);
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const claimed = await claimRuns(database, leaseMs, RUN_BATCH);
  let failure: unknown;
  for (const ref of claimed) {
    try {
      await executeRun(database, ref, opts.afterAction, leaseMs);
    } catch (err) {
      // Stays pending; resumed once its lease expires.
      opts.log?.warn({ err, runId: ref.id }, 'workflow run interrupted; will resume');
      failure ??= err;
    }
  }
  // Surfaces in the runner's log (and to tests); the other runs of the batch went ahead.
  if (failure) throw failure;
  return found + claimed.length;
}

/** The worker task (listed in src/modules/tasks.ts). */
export function createWorkflowTask(opts: WorkflowTaskOptions = {}): WorkerTask {
  return {
    name: 'workflows',
    intervalMs: opts.pollMs ?? 500,
    run: (ctx) => processWorkflows(ctx.database, { ...opts, log: ctx.log }),
  };
}
