import { eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookDeliveries, webhookEndpoints } from '../../src/db/schema/index.js';
import { deliveryBody, dispatchEvents } from '../../src/delivery/fanout.js';
import { emit } from '../../src/platform/events/outbox.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { awaitingFanOut, emitEvents, RETRY_ENV } from './helpers.js';

const SYSTEM_ACTOR = { kind: 'user' as const, id: 'usr_test', role: 'owner' as const };

/**
 * The fan-out statement (src/delivery/fanout.ts) builds each delivery in SQL: who gets which
 * event, the id, and the body byte for byte as `deliveryBody` prints it, with the event's data
 * as it was emitted (key order, escapes, non-ASCII text).
 */
describe('webhook fan-out', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(RETRY_ENV);
  });
  afterAll(async () => {
    await h?.close();
  });

  const register = async (t: TestUser, events: string[]) => {
    const res = await t.call('POST', '/api/webhooks', { url: 'https://example.com/hook', events });
    expect(res.statusCode).toBe(201);
    return res.json().data.id as string;
  };
  /** The events an endpoint has deliveries for, sorted. */
  const madeFor = async (endpointId: string) =>
    (
      await h.admin.db
        .select({ eventId: webhookDeliveries.eventId })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.endpointId, endpointId))
    )
      .map((r) => r.eventId)
      .sort();
  const fanOut = async () => {
    let n = 0;
    for (let k = await dispatchEvents(h.database, 3); k > 0; k = await dispatchEvents(h.database, 3)) n += k;
    return n;
  };

  it('gives each subscribed active endpoint of the organization one delivery whose body is the event as emitted', async () => {
    const t = await newTenant(h);
    const other = await newTenant(h);
    const all = await register(t, ['*']);
    const named = await register(t, ['invoice.paid', 'workflow.lead_scored']);
    const off = await register(t, ['*']);
    // Deactivated as ten failed deliveries in a row would leave it (the API cannot).
    await h.admin.db.update(webhookEndpoints).set({ active: false }).where(eq(webhookEndpoints.id, off));
    const elsewhere = await register(other, ['*']);

    // Keys in no sorted order, nesting, escapes and text outside ASCII: all kept as emitted.
    const paid = {
      zeta: 1,
      alpha: { b: [1, 2.5, -3e-7, null, true], a: 'quote " backslash \\ newline \n tab \t' },
      text: 'Łódź 雪 ❄️ </script> \u2028 \u0001',
      amountDue: 0,
    };
    const emitted = await inTenant(h.database.db, t.organizationId, SYSTEM_ACTOR, async (ctx) => [
      await emit(ctx, 'invoice.paid', paid),
      await emit(ctx, 'customer.created', { customerId: 'cus_1', name: 'A' }),
      await emit(ctx, 'workflow.lead_scored', { score: 9 }),
    ]);
    expect(await fanOut()).toBeGreaterThanOrEqual(3);

    const rows = await h.admin.db
      .select()
      .from(webhookDeliveries)
      .where(
        inArray(
          webhookDeliveries.eventId,
          emitted.map((e) => e.id),
        ),
      );
    const got = rows.map((r) => `${r.event}→${r.endpointId}`).sort();
    // `*` is the catalog only; a named workflow event goes to the endpoint that names it; an
    // inactive endpoint and another organization's get nothing.
    expect(got).toEqual(
      [
        `customer.created→${all}`,
        `invoice.paid→${all}`,
        `invoice.paid→${named}`,
        `workflow.lead_scored→${named}`,
      ].sort(),
    );
    expect(rows.some((r) => r.endpointId === off || r.endpointId === elsewhere)).toBe(false);

    const datas = new Map<string, unknown>([
      [emitted[0]?.id as string, paid],
      [emitted[1]?.id as string, { customerId: 'cus_1', name: 'A' }],
      [emitted[2]?.id as string, { score: 9 }],
    ]);
    for (const r of rows) {
      const e = emitted.find((x) => x.id === r.eventId);
      expect(r.id).toMatch(/^dlv_[0-9a-z]{23}$/);
      expect(r.organizationId).toBe(t.organizationId);
      expect(r.status).toBe('pending');
      expect(r.body).toBe(
        deliveryBody(r.id, r.event, e?.createdAt as Date, t.organizationId, datas.get(r.eventId ?? '')),
      );
    }
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);

    // Each event is fanned out once: its batch is gone, and a second pass makes nothing.
    for (const e of emitted) expect(await awaitingFanOut(h.admin.db, e.id)).toBe(false);
    expect(await fanOut()).toBe(0);
    const again = await h.admin.db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, all));
    expect(again).toHaveLength(2);
  });

  it('takes an event with no subscriber off the outbox without making a delivery', async () => {
    const t = await newTenant(h);
    const [e] = await inTenant(h.database.db, t.organizationId, SYSTEM_ACTOR, async (ctx) => [
      await emit(ctx, 'customer.created', { customerId: 'cus_2', name: 'B' }),
    ]);
    expect(await awaitingFanOut(h.admin.db, e?.id as string)).toBe(true);
    await fanOut();
    expect(await awaitingFanOut(h.admin.db, e?.id as string)).toBe(false);
    const made = await h.admin.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.eventId, e?.id as string));
    expect(made).toHaveLength(0);
    expect(
      await h.admin.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.organizationId, t.organizationId)),
    ).toHaveLength(0);
  });

  it('fans out a transaction bigger than a pass across passes, and a rolled-back one not at all', async () => {
    const t = await newTenant(h);
    const other = await newTenant(h);
    const ep = await register(t, ['*']);
    const otherEp = await register(other, ['*']);
    const created = (n: number, from = 0) =>
      Array.from({ length: n }, (_, i) => ({ type: 'customer.created', data: { customerId: `cus_${from + i}` } }));
    const big = await emitEvents(h.database, t.organizationId, created(7));
    const small = await emitEvents(h.database, other.organizationId, created(2, 100));
    await expect(
      inTenant(h.database.db, t.organizationId, SYSTEM_ACTOR, async (ctx) => {
        await emit(ctx, 'customer.created', { customerId: 'cus_gone' });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');

    // Three at a time: the seven of the first transaction over three passes (the third also
    // takes the other organization's two), then nothing.
    const passes = [];
    for (let k = await dispatchEvents(h.database, 3); k > 0; k = await dispatchEvents(h.database, 3)) passes.push(k);
    expect(passes).toEqual([3, 3, 3]);
    for (const e of [...big, ...small]) expect(await awaitingFanOut(h.admin.db, e.id)).toBe(false);
    expect(await madeFor(ep)).toEqual(big.map((e) => e.id).sort());
    expect(await madeFor(otherEp)).toEqual(small.map((e) => e.id).sort());
  });

  // No trigger adds the batch row since drizzle/0042 (Citus refuses a trigger that writes another
  // table): a writer other than emit writes its transaction's batch row itself, and is fanned out.
  it('fans out an event written by a plain INSERT with its batch row, as emit writes them', async () => {
    const t = await newTenant(h);
    const ep = await register(t, ['*']);
    await h.admin.db.execute(
      sql`WITH e AS (
            INSERT INTO events (id, organization_id, type, data) VALUES ('evt_plain_insert', ${t.organizationId}, 'customer.created', '{"customerId":"cus_9"}')
          )
          INSERT INTO event_batches (tx, organization_id) VALUES (pg_current_xact_id()::text::bigint, ${t.organizationId})`,
    );
    expect(await awaitingFanOut(h.admin.db, 'evt_plain_insert')).toBe(true);
    await fanOut();
    const made = await h.admin.db
      .select({ eventId: webhookDeliveries.eventId })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, ep));
    expect(made).toEqual([{ eventId: 'evt_plain_insert' }]);
  });

  /*
   * Two ways: one statement across organizations (PostgreSQL, PGlite), and one organization at a
   * time (what the worker does on Citus, where a statement locks rows of one shard only).
   */
  describe.each([
    { mode: 'in one statement', perOrganization: false },
    { mode: 'one organization at a time, as on Citus', perOrganization: true },
  ])('passing $mode', ({ perOrganization }) => {
    it("fans out another organization's event in the pass after one transaction's burst, not after all of it", async () => {
      const bulk = await newTenant(h);
      const quiet = await newTenant(h);
      const bulkEp = await register(bulk, ['*']);
      const quietEp = await register(quiet, ['*']);
      const created = (n: number) =>
        Array.from({ length: n }, (_, i) => ({ type: 'customer.created', data: { customerId: `cus_bulk_${i}` } }));
      // 450 events in one transaction (an import, a month's batch invoicing), then one event of
      // another organization committed after it.
      const burst = await emitEvents(h.database, bulk.organizationId, created(450));
      const [probe] = await emitEvents(h.database, quiet.organizationId, [
        { type: 'invoice.paid', data: { invoiceId: 'inv_probe' } },
      ]);

      // One pass of 200 splits itself over the two batches waiting: 100 of the burst and the probe.
      expect(await dispatchEvents(h.database, 200, perOrganization)).toBe(101);
      expect(await awaitingFanOut(h.admin.db, probe?.id as string)).toBe(false);
      expect(await madeFor(quietEp)).toEqual([probe?.id]);

      // The burst alone then fills whole passes, and every event of it is made into one delivery.
      const passes = [];
      for (
        let k = await dispatchEvents(h.database, 200, perOrganization);
        k > 0;
        k = await dispatchEvents(h.database, 200, perOrganization)
      )
        passes.push(k);
      expect(passes).toEqual([200, 150]);
      expect(await madeFor(bulkEp)).toEqual(burst.map((e) => e.id).sort());
    });

    it('makes each event into deliveries once when passes run side by side', async () => {
      const t = await newTenant(h);
      const ep = await register(t, ['*']);
      const ids: string[] = [];
      for (let tx = 0; tx < 12; tx++) {
        const batch = await emitEvents(
          h.database,
          t.organizationId,
          Array.from({ length: 5 }, (_, i) => ({ type: 'customer.created', data: { customerId: `cus_${tx}_${i}` } })),
        );
        ids.push(...batch.map((e) => e.id));
      }
      // Four workers' passes at once (on PostgreSQL each on its own connection), four events
      // each: they skip the batches another holds, and cut batches where another stopped.
      const worker = async () => {
        let n = 0;
        for (
          let k = await dispatchEvents(h.database, 4, perOrganization);
          k > 0;
          k = await dispatchEvents(h.database, 4, perOrganization)
        )
          n += k;
        return n;
      };
      const counts = await Promise.all([worker(), worker(), worker(), worker()]);
      // A pass that found every batch held returns 0 early; whatever is left, one more drains.
      const rest = await worker();
      expect(counts.reduce((a, b) => a + b, 0) + rest).toBe(ids.length);
      const rows = await h.admin.db
        .select({ eventId: webhookDeliveries.eventId })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.endpointId, ep));
      expect(rows.map((r) => r.eventId).sort()).toEqual([...ids].sort());
    });
  });

  it("refuses a delivery whose organization is not its endpoint's, even from the schema owner", async () => {
    const t = await newTenant(h);
    const other = await newTenant(h);
    const ep = await register(t, ['*']);
    const row = { id: 'dlv_cross_tenant', endpointId: ep, event: 'customer.created', body: '{}' };
    await expect(
      h.admin.db.insert(webhookDeliveries).values({ ...row, organizationId: other.organizationId }),
    ).rejects.toThrow();
    await h.admin.db.insert(webhookDeliveries).values({ ...row, organizationId: t.organizationId });
  });
});
