import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { events, workflowEventBatches, workflowRuns } from '../../src/db/schema/index.js';
import { dispatchEvents } from '../../src/delivery/fanout.js';
import { discoverRuns } from '../../src/modules/workflows/workflows.tasks.js';
import { emit } from '../../src/platform/events/outbox.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { defineWorkflow } from './helpers.js';

/*
 * How the workflows worker finds the events it has still to match (drizzle/0034): its own
 * batches per writing transaction, read in passes of at most 100 events of a batch, the events
 * themselves never rewritten.
 */
describe('workflow discovery', () => {
  let h: Harness;
  let owner: TestUser;
  let workflowId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    workflowId = (
      await defineWorkflow(owner, {
        name: 'every_update',
        trigger: { event: 'customer.updated' },
        actions: [{ type: 'emit' }],
      })
    ).id;
    await discoverAll();
  });
  afterAll(async () => h?.close());

  const actor = { kind: 'user' as const, id: 'usr_x', role: 'owner' as const };
  /** One transaction emitting `n` customer.updated events; their ids. */
  const emitInOneTransaction = (n: number) =>
    inTenant(h.database.db, owner.organizationId, actor, async (ctx) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push((await emit(ctx, 'customer.updated', { n: i })).id);
      return ids;
    });
  /** Passes until one finds nothing (bounded). */
  async function discoverAll() {
    for (let i = 0; i < 50; i++) if ((await discoverRuns(h.database)) === 0) return;
    throw new Error('discovery did not settle');
  }
  const runsFor = async (eventIds: string[]) => {
    const rows = await h.admin.db
      .select({ eventId: workflowRuns.eventId })
      .from(workflowRuns)
      .where(eq(workflowRuns.workflowId, workflowId));
    return rows.map((r) => r.eventId).filter((id) => eventIds.includes(id));
  };
  const batchesLeft = async () =>
    (
      await h.admin.db
        .select()
        .from(workflowEventBatches)
        .where(eq(workflowEventBatches.organizationId, owner.organizationId))
    ).length;

  it('matches a big transaction over several passes, each event once, and reads it to its end', async () => {
    const ids = await emitInOneTransaction(230);
    expect(await batchesLeft()).toBe(1);
    // First pass: the batch's first 100 events; it stays, marked where the pass stopped.
    expect(await discoverRuns(h.database)).toBe(1);
    expect((await runsFor(ids)).sort()).toEqual([...ids].sort().slice(0, 100));
    const [batch] = await h.admin.db
      .select()
      .from(workflowEventBatches)
      .where(eq(workflowEventBatches.organizationId, owner.organizationId));
    expect(batch?.checkedTo).toBe([...ids].sort()[99]);
    await discoverAll();
    expect((await runsFor(ids)).sort()).toEqual([...ids].sort());
    expect(await batchesLeft()).toBe(0);
    // The events were only read.
    const marked = await h.admin.db
      .select({ id: events.id })
      .from(events)
      .where(and(eq(events.organizationId, owner.organizationId), sql`${events.workflowsCheckedAt} IS NOT NULL`));
    expect(marked).toEqual([]);
  });

  it('goes at its own pace beside the webhook fan-out: neither one consumes the other one’s batches', async () => {
    const ids = await emitInOneTransaction(3);
    while ((await dispatchEvents(h.database, 500)) > 0) {}
    await discoverAll();
    expect((await runsFor(ids)).sort()).toEqual([...ids].sort());
    const later = await emitInOneTransaction(2);
    await discoverAll();
    expect((await runsFor(later)).sort()).toEqual([...later].sort());
    const waiting = await h.admin.db.execute(
      sql`SELECT count(*)::int AS n FROM event_batches WHERE organization_id = ${owner.organizationId}`,
    );
    expect(rowsOf<{ n: number }>(waiting)[0]?.n).toBe(1);
  });

  it('skips an event matched before the upgrade and deletes a batch whose events are gone', async () => {
    const [old] = await emitInOneTransaction(1);
    const [fresh] = await emitInOneTransaction(1);
    await h.admin.db
      .update(events)
      .set({ workflowsCheckedAt: new Date() })
      .where(eq(events.id, old as string));
    await h.admin.db.insert(workflowEventBatches).values({ tx: 1, organizationId: owner.organizationId });
    await discoverAll();
    expect(await runsFor([old as string, fresh as string])).toEqual([fresh]);
    expect(await batchesLeft()).toBe(0);
  });

  it('makes each run once when passes run side by side', async () => {
    const ids = (await Promise.all(Array.from({ length: 12 }, () => emitInOneTransaction(15)))).flat();
    const counts = await Promise.all(Array.from({ length: 4 }, () => discoverRuns(h.database)));
    expect(counts.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    await discoverAll();
    const runs = await runsFor(ids);
    expect(runs).toHaveLength(ids.length);
    expect(new Set(runs).size).toBe(ids.length);
    expect(await batchesLeft()).toBe(0);
  });
});
