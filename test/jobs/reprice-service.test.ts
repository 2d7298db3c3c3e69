import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { jobSchedules, services } from '../../src/db/schema/index.js';
import { addDays } from '../../src/platform/dates.js';
import { eventsDuring } from '../factories.js';
import { newTenant } from '../harness.js';
import { useScheduleTenant } from './schedules-fixture.js';

/*
 * Issue 48: "a catalog price change reaches no schedule". POST /api/services/{id}/reprice
 * sets the catalog price and carries it to the schedules whose lines use the service, from
 * a date: their visits from then on (still scheduled, not invoiced, not edited by hand)
 * take it; earlier visits, billed ones and hand-edited ones keep the old price.
 */
describe('POST /api/services/{id}/reprice', () => {
  const t = useScheduleTenant();
  let serviceId: string;
  let daily: string; // the service at its catalog price, plus an edging line
  let weekly: string; // twice the service at a negotiated price
  let other: string; // no line of the service
  let ended: string; // the service, but ended
  let from: string;
  const priceOn = (v: { lineItems: Array<{ serviceId?: string | null; unitPrice: number | string }> }) =>
    Number(v.lineItems.find((l) => l.serviceId === serviceId)?.unitPrice);

  beforeAll(async () => {
    const svc = await t.owner.call('POST', '/api/services', { name: 'Weekly mowing', unitPrice: 45 });
    expect(svc.statusCode, svc.body).toBe(201);
    serviceId = svc.json().data.id;
    from = addDays(t.today, 7);
    daily = (
      await t.create('FREQ=DAILY', {
        lineItems: [
          { serviceId, quantity: 1 },
          { description: 'Edging', quantity: 1, unitPrice: 10 },
        ],
      })
    ).id;
    weekly = (await t.create('FREQ=WEEKLY', { lineItems: [{ serviceId, quantity: 2, unitPrice: 40 }] })).id;
    other = (
      await t.create('FREQ=WEEKLY', { lineItems: [{ description: 'Leaf cleanup', quantity: 1, unitPrice: 80 }] })
    ).id;
    ended = (await t.create('FREQ=WEEKLY', { lineItems: [{ serviceId, quantity: 1 }] })).id;
    expect((await t.owner.call('POST', `/api/jobs/schedules/${ended}/end`)).statusCode).toBe(200);

    // By hand: the day after `from` edited, two days after completed and invoiced.
    const byDate = new Map((await t.visits(daily)).map((v) => [v.scheduledDate, v.id]));
    const edited = await t.owner.call('PUT', `/api/jobs/${byDate.get(addDays(from, 1))}`, { notes: 'Gate code 1234' });
    expect(edited.statusCode, edited.body).toBe(200);
    const billedId = byDate.get(addDays(from, 2));
    const done = await t.owner.call('PUT', `/api/jobs/${billedId}`, { status: 'completed' });
    expect(done.statusCode, done.body).toBe(200);
    const billed = await t.owner.call('POST', '/api/invoices/from-jobs', { jobIds: [billedId] });
    expect(billed.statusCode, billed.body).toBe(201);
  });

  /** The daily schedule's visits a reprice from `from` may change. */
  const editableFrom = async () =>
    (await t.visits(daily)).filter(
      (v) => v.scheduledDate >= from && v.status === 'scheduled' && v.handEditedAt === null && v.invoiceId === null,
    );

  it('answers bad input with a 400 naming the field, and writes nothing', async () => {
    const cases: Array<[body: Record<string, unknown>, field: string]> = [
      [{ unitPrice: 48.505, from }, 'unitPrice'],
      [{ unitPrice: -1, from }, 'unitPrice'],
      [{ unitPrice: 2_000_000_000, from }, 'unitPrice'],
      [{ unitPrice: '48' as unknown as number, from }, 'unitPrice'],
      [{ unitPrice: 48, from: addDays(t.today, -1) }, 'from'],
      [{ unitPrice: 48, from: addDays(t.today, 400) }, 'from'],
      [{ unitPrice: 48, from: 'next week' }, 'from'],
      [{ unitPrice: 48, from: '2026-02-30' }, 'from'],
      [{ from }, 'unitPrice'],
      [{ unitPrice: 48, from, price: 48 }, 'price'],
    ];
    for (const [body, field] of cases) {
      const res = await t.owner.call('POST', `/api/services/${serviceId}/reprice`, body);
      expect(res.statusCode, `${JSON.stringify(body)} ${res.body}`).toBe(400);
      expect(res.body).toContain(field);
      expect(res.body).not.toMatch(/pattern|constant|NOT/);
    }
    const [row] = await t.h.admin.db.select().from(services).where(eq(services.id, serviceId));
    expect(row?.unitPriceCents).toBe(4500);
  });

  it('another organization’s or an unknown service → 404; an inactive one → 409; nothing written', async () => {
    const stranger = await newTenant(t.h);
    const theirs = await stranger.call('POST', `/api/services/${serviceId}/reprice`, { unitPrice: 1 });
    expect(theirs.statusCode, theirs.body).toBe(404);
    const unknown = await t.owner.call('POST', '/api/services/svc_nope/reprice', { unitPrice: 1 });
    expect(unknown.statusCode, unknown.body).toBe(404);

    const retired = (await t.owner.call('POST', '/api/services', { name: 'Old', unitPrice: 5, active: false })).json()
      .data.id;
    const res = await t.owner.call('POST', `/api/services/${retired}/reprice`, { unitPrice: 6 });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().error.code).toBe('INVALID_STATE');
    const [row] = await t.h.admin.db.select().from(services).where(eq(services.id, retired));
    expect(row?.unitPriceCents).toBe(500);
  });

  it('dryRun answers what would change and writes nothing', async () => {
    const before = await t.visits(daily);
    const events = await eventsDuring(t.h, t.owner.organizationId, async () => {
      const res = await t.owner.call('POST', `/api/services/${serviceId}/reprice`, {
        unitPrice: 48.5,
        from,
        dryRun: true,
      });
      expect(res.statusCode, res.body).toBe(200);
      const data = res.json().data;
      expect(data).toMatchObject({ dryRun: true, from, oldUnitPrice: 45, service: { id: serviceId, unitPrice: 48.5 } });
      expect(data.schedules.map((s: { id: string }) => s.id)).toEqual([daily, weekly]);
      expect(data.schedules[0].visitsRepriced).toBe((await editableFrom()).length);
    });
    expect(events).toEqual([]);
    const [row] = await t.h.admin.db.select().from(services).where(eq(services.id, serviceId));
    expect(row?.unitPriceCents).toBe(4500);
    expect(await t.visits(daily)).toEqual(before);
    const read = await t.owner.call('GET', `/api/jobs/schedules/${daily}`);
    expect(read.json().data.lineItems[0].unitPrice).toBe(45);
  });

  it('reprices the catalog, the schedules using it and their visits from `from`; the rest keep their price', async () => {
    const all = await t.visits(daily);
    const expectedDaily = (await editableFrom()).map((v) => v.id).sort();
    const expectedWeekly = (await t.visits(weekly)).filter((v) => v.scheduledDate >= from && v.status === 'scheduled');
    const endedBefore = await t.visits(ended);

    const res = await t.owner.call('POST', `/api/services/${serviceId}/reprice`, { unitPrice: 48.5, from });
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({ dryRun: false, from, oldUnitPrice: 45, service: { id: serviceId, unitPrice: 48.5 } });
    expect(data.schedules).toEqual([
      {
        id: daily,
        title: 'Weekly mowing',
        customerId: t.customerId,
        status: 'active',
        lines: [
          {
            index: 0,
            description: 'Weekly mowing',
            quantity: 1,
            oldUnitPrice: 45,
            unitPrice: 48.5,
            oldAmount: 45,
            amount: 48.5,
          },
        ],
        oldTotal: 55,
        total: 58.5,
        visitsRepriced: expectedDaily.length,
      },
      {
        id: weekly,
        title: 'Weekly mowing',
        customerId: t.customerId,
        status: 'active',
        lines: [
          {
            index: 0,
            description: 'Weekly mowing',
            quantity: 2,
            oldUnitPrice: 40,
            unitPrice: 48.5,
            oldAmount: 80,
            amount: 97,
          },
        ],
        oldTotal: 80,
        total: 97,
        visitsRepriced: expectedWeekly.length,
      },
    ]);
    expect(data.visitsRepriced).toBe(expectedDaily.length + expectedWeekly.length);

    // The catalog and the schedules' lines.
    expect((await t.owner.call('GET', `/api/services/${serviceId}`)).json().data.unitPrice).toBe(48.5);
    const sched = (await t.owner.call('GET', `/api/jobs/schedules/${daily}`)).json().data;
    expect(sched.lineItems.map((l: { unitPrice: number }) => l.unitPrice)).toEqual([48.5, 10]);
    expect(sched.total).toBe(58.5);
    const [otherRow] = await t.h.admin.db.select().from(jobSchedules).where(eq(jobSchedules.id, other));
    expect(otherRow?.lineItems[0]?.unitPriceCents).toBe(8000);
    const [endedRow] = await t.h.admin.db.select().from(jobSchedules).where(eq(jobSchedules.id, ended));
    expect(endedRow?.lineItems[0]?.unitPriceCents).toBe(4500);
    expect(await t.visits(ended)).toEqual(endedBefore);

    // The visits, one by one, through the API.
    const repriced = new Set(expectedDaily);
    for (const v of all) {
      const job = (await t.owner.call('GET', `/api/jobs/${v.id}`)).json().data;
      if (repriced.has(v.id)) {
        expect(priceOn(job), v.scheduledDate).toBe(48.5);
        expect(job.total).toBe(58.5);
        expect(job.id).toBe(v.id); // rewritten in place, same job
      } else {
        // Before `from`, edited by hand, or completed and invoiced: the old price.
        expect(priceOn(job), `${v.scheduledDate} ${v.status}`).toBe(45);
        expect(job.total).toBe(55);
      }
    }
    const kept = all.filter((v) => !repriced.has(v.id)).map((v) => v.scheduledDate);
    expect(kept).toContain(addDays(from, -1));
    expect(kept).toContain(addDays(from, 1)); // hand-edited
    expect(kept).toContain(addDays(from, 2)); // billed
    const billed = all.find((v) => v.scheduledDate === addDays(from, 2));
    expect(billed?.invoiceId).not.toBeNull();
    for (const v of await t.visits(weekly)) {
      expect(v.lineItems[0]?.unitPriceCents, v.scheduledDate).toBe(v.scheduledDate >= from ? 4850 : 4000);
    }

    // New lines naming the service take the new catalog price.
    const fresh = await t.create('FREQ=WEEKLY', { lineItems: [{ serviceId, quantity: 1 }] });
    const freshRead = (await t.owner.call('GET', `/api/jobs/schedules/${fresh.id}`)).json().data;
    expect(freshRead.lineItems[0].unitPrice).toBe(48.5);

    // The same price again changes nothing.
    const again = await t.owner.call('POST', `/api/services/${serviceId}/reprice`, { unitPrice: 48.5, from });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data).toMatchObject({ schedules: [], visitsRepriced: 0 });
  });
});
