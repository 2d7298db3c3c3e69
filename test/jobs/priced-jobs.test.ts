import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema/index.js';
import { createCustomer, createService, eventsOf, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

describe('priced jobs', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    other = await newTenant(h, { name: 'Other Co' });
    customerId = (await createCustomer(h, owner)).id;
    await setSettings(h, owner.organizationId, { taxRate: 8.25 });
  });
  afterAll(async () => h?.close());

  it('prices lines as invoice lines do (catalog defaults, half away from zero), totals them, shows them in events', async () => {
    const svc = await createService(h, owner, { name: 'Weekly mowing', unitPriceCents: 4500, taxable: false });
    const res = await owner.call('POST', '/api/jobs', {
      customerId,
      scheduledDate: '2026-11-03',
      lineItems: [
        { serviceId: svc.id, quantity: 1 },
        { description: 'Edging', quantity: 0.333, unitPrice: 10.05 },
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    const job = res.json().data;
    // 0.333 × 10.05 = 3.34665 → 3.35 (half away from zero, as on invoices)
    expect(job.lineItems).toEqual([
      { serviceId: svc.id, description: 'Weekly mowing', quantity: 1, unitPrice: 45, taxable: false, amount: 45 },
      { serviceId: null, description: 'Edging', quantity: 0.333, unitPrice: 10.05, taxable: true, amount: 3.35 },
    ]);
    expect(job.total).toBe(48.35);
    expect(job.invoiceId).toBeNull();
    const [created] = await eventsOf(h, owner.organizationId, 'job.created');
    expect(created?.data).toMatchObject({ job: { id: job.id, total: 48.35, invoiceId: null } });
    expect((created?.data.job as { lineItems: unknown[] } | undefined)?.lineItems).toHaveLength(2);

    const got = (await owner.call('GET', `/api/jobs/${job.id}`)).json().data;
    expect(got).toMatchObject({ total: 48.35, lineItems: job.lineItems });
    const listed = (await owner.call('GET', `/api/jobs?customerId=${customerId}`)).json().data;
    expect(listed.find((j: { id: string }) => j.id === job.id)).toMatchObject({ total: 48.35, invoiceId: null });
  });

  it('a job without lines totals 0; PATCH replaces the lines and records it; [] clears them', async () => {
    const job = (await owner.call('POST', '/api/jobs', { customerId, scheduledDate: '2026-11-04' })).json().data;
    expect(job).toMatchObject({ lineItems: [], total: 0, invoiceId: null });
    const patched = await owner.call('PATCH', `/api/jobs/${job.id}`, {
      lineItems: [{ description: 'Leaf cleanup', quantity: 2, unitPrice: 37.5 }],
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data).toMatchObject({ total: 75, lineItems: [{ amount: 75 }] });
    expect(patched.json().data.activity.at(-1)).toMatchObject({
      type: 'updated',
      message: 'Lines set: 1, total 75.00',
    });
    // The same lines again change nothing and record nothing.
    const again = await owner.call('PATCH', `/api/jobs/${job.id}`, {
      lineItems: [{ description: 'Leaf cleanup', quantity: 2, unitPrice: 37.5 }],
    });
    expect(again.json().data.activity).toHaveLength(patched.json().data.activity.length);
    const cleared = (await owner.call('PATCH', `/api/jobs/${job.id}`, { lineItems: [] })).json().data;
    expect(cleared).toMatchObject({ total: 0, lineItems: [] });
  });

  it('refuses bad lines with a 400 naming the field and writes nothing', async () => {
    const foreign = await createService(h, other);
    const count = async () =>
      (await h.admin.db.select().from(jobs).where(eq(jobs.organizationId, owner.organizationId))).length;
    const before = await count();
    const cases: Array<[unknown, string]> = [
      [[{ serviceId: foreign.id, quantity: 1 }], 'lineItems.serviceId'],
      [[{ description: 'X', quantity: 1, unitPrice: 1.005 }], 'lineItems.0.unitPrice'],
      [[{ description: 'X', quantity: 1.0001, unitPrice: 1 }], 'lineItems.0.quantity'],
      [[{ quantity: 1, unitPrice: 1 }], 'lineItems.0.description'],
      [[{ description: 'X', quantity: 1 }], 'lineItems.0.unitPrice'],
    ];
    for (const [lineItems, field] of cases) {
      const res = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: '2026-11-05', lineItems });
      expect(res.statusCode, JSON.stringify(lineItems)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
      expect(JSON.stringify(res.json().error.details)).toContain(field);
    }
    expect(await count()).toBe(before);
  });

  it('a completed job’s lines cannot change', async () => {
    const job = (
      await owner.call('POST', '/api/jobs', {
        customerId,
        scheduledDate: '2026-11-06',
        lineItems: [{ description: 'Mow', quantity: 1, unitPrice: 40 }],
      })
    ).json().data;
    expect((await owner.call('PATCH', `/api/jobs/${job.id}`, { status: 'completed' })).statusCode).toBe(200);
    const res = await owner.call('PATCH', `/api/jobs/${job.id}`, { lineItems: [] });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('INVALID_STATE');
  });
});
