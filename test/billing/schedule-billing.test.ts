import { and, count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices, jobs } from '../../src/db/schema/index.js';
import { billCompletedVisit, billPreviousMonth, previousMonth } from '../../src/flows/bill-jobs.js';
import {
  billDueInstallments,
  billInstallment,
  installmentPlan,
} from '../../src/modules/invoices/invoices.installments.js';
import { type Ctx, inTenant } from '../../src/platform/tenancy.js';
import { createCustomer, line, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * The billing functions a schedule's `billing` mode runs (operations.md §9): per visit,
 * the monthly batch, installments. Each bill is made once, also when two transactions
 * (two connections on PostgreSQL, as two worker processes would) race for it.
 */
describe('installment plans', () => {
  it('$1,800 in six is six $300; $1,000 in three puts the odd cent on the last', () => {
    const six = installmentPlan(180_000, 6, '2026-04-01');
    expect(six.map((i) => i.amountCents)).toEqual(Array(6).fill(30_000));
    expect(six.map((i) => i.date)).toEqual([
      '2026-04-01',
      '2026-05-01',
      '2026-06-01',
      '2026-07-01',
      '2026-08-01',
      '2026-09-01',
    ]);
    expect(installmentPlan(100_000, 3, '2026-01-15').map((i) => i.amountCents)).toEqual([33_333, 33_333, 33_334]);
    // Month ends clamp, counted from the first date each time (not drifting to the 28th).
    expect(installmentPlan(300, 3, '2026-01-31').map((i) => i.date)).toEqual([
      '2026-01-31',
      '2026-02-28',
      '2026-03-31',
    ]);
  });

  it('given amounts must be one per installment and add up to the total (400 naming billing.amounts)', () => {
    expect(installmentPlan(100_000, 2, '2026-04-01', [40_000, 60_000]).map((i) => i.amountCents)).toEqual([
      40_000, 60_000,
    ]);
    expect(() => installmentPlan(100_000, 2, '2026-04-01', [40_000, 50_000])).toThrow(/add up to 900.00/);
    expect(() => installmentPlan(100_000, 3, '2026-04-01', [40_000, 60_000])).toThrow(/3 amounts/);
    for (const bad of [
      () => installmentPlan(100_000, 0, '2026-04-01'),
      () => installmentPlan(100_000, 2, '04/01/2026'),
      () => installmentPlan(100_000, 2, '2026-04-01', [40_000, 60_000.5]),
    ]) {
      expect(bad).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    }
    try {
      installmentPlan(100_000, 2, '2026-04-01', [1, 2]);
    } catch (err) {
      expect((err as { details: Array<{ field: string }> }).details[0]?.field).toBe('billing.amounts');
    }
  });
});

describe('schedule billing', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  const actor = { kind: 'system' as const, id: 'worker', role: 'owner' as const };
  const inOrg = <T>(fn: (ctx: Ctx) => Promise<T>) => inTenant(h.database.db, owner.organizationId, actor, fn);
  const deps = () => ({ baseUrl: h.config.baseUrl });
  const invoiceCount = async () =>
    Number(
      (
        await h.admin.db.select({ n: count() }).from(invoices).where(eq(invoices.organizationId, owner.organizationId))
      )[0]?.n,
    );

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: 'America/Chicago' });
    await setSettings(h, owner.organizationId, { taxRate: 8 });
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  async function completedJob(customer: string, date: string, completedAt?: string) {
    const res = await owner.call('POST', '/api/jobs', {
      customerId: customer,
      scheduledDate: date,
      lineItems: [line('Weekly mowing', 1, 45)],
    });
    const id = res.json().data.id as string;
    expect((await owner.call('PATCH', `/api/jobs/${id}`, { status: 'completed' })).statusCode).toBe(200);
    if (completedAt)
      await h.admin.db
        .update(jobs)
        .set({ completedAt: new Date(completedAt) })
        .where(eq(jobs.id, id));
    return id;
  }

  it('a $1,800 season in six installments makes six $300 invoices on their dates, each once, even when raced', async () => {
    const plan = installmentPlan(180_000, 6, '2026-04-01');
    const bill = { keyPrefix: 'schedule:sch_test', customerId, description: 'Lawn care 2026' };
    const before = await invoiceCount();
    // Two workers at once on 2026-06-15: installments 1..3 are due; each is made once.
    const [a, b] = await Promise.all([
      inOrg((ctx) => billDueInstallments(ctx, plan, '2026-06-15', bill, deps())),
      inOrg((ctx) => billDueInstallments(ctx, plan, '2026-06-15', bill, deps())),
    ]);
    expect(a.length + b.length).toBe(3);
    expect(await invoiceCount()).toBe(before + 3);
    // The rest of the season, run twice more.
    await inOrg((ctx) => billDueInstallments(ctx, plan, '2026-12-31', bill, deps()));
    await inOrg((ctx) => billDueInstallments(ctx, plan, '2026-12-31', bill, deps()));
    const made = await h.admin.db
      .select()
      .from(invoices)
      .where(and(eq(invoices.organizationId, owner.organizationId), eq(invoices.customerId, customerId)));
    const season = made.filter((i) => i.invoiceDate >= '2026-04-01' && i.invoiceDate <= '2026-09-01');
    expect(season.map((i) => [i.invoiceDate, i.totalCents]).sort()).toEqual(plan.map((p) => [p.date, 30_000]));
  });

  it('one installment raced by two transactions makes one invoice; both answer it', async () => {
    const [installment] = installmentPlan(100_000, 3, '2026-05-01');
    const bill = {
      key: 'schedule:sch_race:installment:1',
      customerId,
      description: 'Snow season',
      installment: installment as NonNullable<typeof installment>,
      count: 3,
      send: true,
    };
    const before = await invoiceCount();
    const results = await Promise.all([
      inOrg((ctx) => billInstallment(ctx, bill, deps())),
      inOrg((ctx) => billInstallment(ctx, bill, deps())),
    ]);
    expect(results.map((r) => r.created).sort()).toEqual([false, true]);
    expect(await invoiceCount()).toBe(before + 1);
    const made = results.find((r) => r.created)?.invoice;
    expect(made).toMatchObject({ status: 'sent', total: 333.33, invoiceDate: '2026-05-01' });
    expect(made?.lineItems[0]?.description).toBe('Installment 1 of 3 — Snow season');
    expect(results.find((r) => !r.created)?.invoice?.id).toBe(made?.id);
  });

  it('per visit: a completed visit gets its own invoice once, sent when autoSend', async () => {
    const id = await completedJob(customerId, '2026-11-03');
    const before = await invoiceCount();
    const [a, b] = await Promise.all([
      inOrg((ctx) => billCompletedVisit(ctx, id, { autoSend: true }, deps())),
      inOrg((ctx) => billCompletedVisit(ctx, id, { autoSend: true }, deps())),
    ]);
    const made = a ?? b;
    expect([a, b].filter((x) => x === null)).toHaveLength(1);
    expect(made).toMatchObject({ status: 'sent', subtotal: 45, tax: 3.6, total: 48.6 });
    expect(await invoiceCount()).toBe(before + 1);
    expect((await owner.call('GET', `/api/jobs/${id}`)).json().data.invoiceId).toBe(made?.id);
    // A visit not completed is not billed.
    const open = (
      await owner.call('POST', '/api/jobs', {
        customerId,
        scheduledDate: '2026-11-10',
        lineItems: [line()],
      })
    ).json().data.id;
    expect(await inOrg((ctx) => billCompletedVisit(ctx, open, {}, deps()))).toBeNull();
  });

  it('monthly batch on November 1st: October’s completed visits, one invoice per customer, once', async () => {
    expect(previousMonth('2026-11-01')).toEqual({ from: '2026-10-01', to: '2026-10-31' });
    expect(previousMonth('2027-01-01')).toEqual({ from: '2026-12-01', to: '2026-12-31' });
    const second = (await createCustomer(h, owner)).id;
    await completedJob(customerId, '2026-10-06', '2026-10-06T16:00:00Z');
    await completedJob(customerId, '2026-10-13', '2026-10-13T16:00:00Z');
    await completedJob(second, '2026-10-20', '2026-10-20T16:00:00Z');
    const november = await completedJob(second, '2026-11-02', '2026-11-02T16:00:00Z');
    const [a, b] = await Promise.all([
      inOrg((ctx) => billPreviousMonth(ctx, '2026-11-01', {}, deps())),
      inOrg((ctx) => billPreviousMonth(ctx, '2026-11-01', {}, deps())),
    ]);
    const made = [...a, ...b];
    expect(made.map((i) => [i.customerId, i.lineItems.length]).sort()).toEqual(
      [
        [customerId, 2],
        [second, 1],
      ].sort(),
    );
    expect((await owner.call('GET', `/api/jobs/${november}`)).json().data.invoiceId).toBeNull();
  });
});
