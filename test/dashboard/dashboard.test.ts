import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * The dashboard on a known data set (operations.md §7), written straight into the
 * tables so every figure is known in advance. The organization is in New York; the
 * range is March 2026, whose edges are where a UTC reading would differ: a refund, a
 * completion and a clock-in at 23:xx on March 31 local time (April 1 in UTC) count,
 * and a refund at 23:30 on February 28 local time (March 1 in UTC) does not.
 */

const TZ = 'America/New_York';
const RANGE = 'from=2026-03-01&to=2026-03-31';

let h: Harness;
let owner: TestUser;
let empty: TestUser;
let today: string;
let n = 0;

const id = (p: string) => `${p}_dash${++n}`;
const q = (s: ReturnType<typeof sql>) => h.admin.db.execute(s);

async function seed(org: string) {
  const [member] = (
    (await q(sql`SELECT id, user_id FROM members WHERE organization_id = ${org}`)) as unknown as {
      rows: Array<{ id: string; user_id: string }>;
    }
  ).rows;
  const cus = id('cus');
  await q(sql`INSERT INTO customers (id, organization_id, first_name) VALUES (${cus}, ${org}, 'Dana')`);
  const inv = async (status: string, date: string, total: number, paid: number, due: string) => {
    const iid = id('inv');
    await q(sql`INSERT INTO invoices (id, organization_id, invoice_number, customer_id, status, invoice_date, due_date,
        tax_rate, subtotal_cents, tax_cents, total_cents, amount_paid_cents)
      VALUES (${iid}, ${org}, ${iid}, ${cus}, ${status}, ${date}, ${due}, 0, ${total}, 0, ${total}, ${paid})`);
    return iid;
  };
  const t = (days: number) => addDays(today, days);
  await inv('sent', '2026-03-05', 10000, 0, t(10)); // current 100.00
  const inv2 = await inv('partially_paid', '2026-03-10', 25050, 5025, t(-5)); // 1–30: 200.25
  await inv('overdue', '2026-03-31', 8000, 0, t(-45)); // 31–60: 80
  await inv('sent', '2026-02-28', 4000, 0, t(-75)); // out of range; 61–90: 40
  await inv('sent', '2026-04-01', 3000, 0, t(-200)); // out of range; over 90: 30
  await inv('draft', '2026-03-15', 99900, 0, t(-5)); // never counted
  await inv('void', '2026-03-15', 50000, 0, t(-5)); // never counted
  const inv8 = await inv('paid', '2026-03-20', 6000, 6000, t(-5)); // invoiced only
  await inv('written_off', '2026-03-21', 1000, 0, t(-5)); // invoiced only
  await inv('sent', '2026-01-01', 500, 0, t(-30)); // out of range; exactly 30 days late: 1–30
  await inv('sent', '2026-01-02', 700, 0, t(0)); // out of range; due today: current

  const pay = async (invoiceId: string, cents: number, date: string) => {
    const pid = id('pay');
    await q(sql`INSERT INTO payments (id, organization_id, invoice_id, amount_cents, payment_date, method)
      VALUES (${pid}, ${org}, ${invoiceId}, ${cents}, ${date}, 'cash')`);
    return pid;
  };
  await pay(inv2, 5025, '2026-03-12');
  await pay(inv8, 6000, '2026-04-01');
  const p3 = await pay(inv8, 2000, '2026-03-31');
  const refund = async (cents: number, at: string) =>
    q(sql`INSERT INTO payment_refunds (id, organization_id, payment_id, amount_cents, applied_cents, origin, created_at)
      VALUES (${id('ref')}, ${org}, ${p3}, ${cents}, ${cents}, 'API', ${at}::timestamptz)`);
  await refund(500, '2026-04-01T03:30:00Z'); // March 31, 23:30 in New York: in range
  await refund(700, '2026-03-01T04:30:00Z'); // February 28, 23:30 in New York: out of range

  const ven = id('ven');
  await q(sql`INSERT INTO vendors (id, organization_id, name) VALUES (${ven}, ${org}, 'Supply Co')`);
  const bill = (status: string, total: number, paid: number, due: string) =>
    q(sql`INSERT INTO bills (id, organization_id, bill_number, vendor_id, status, bill_date, due_date, total_cents, amount_paid_cents)
      VALUES (${id('bil')}, ${org}, ${id('B')}, ${ven}, ${status}, '2026-03-01', ${due}, ${total}, ${paid})`);
  await bill('open', 30000, 0, t(3));
  await bill('partially_paid', 20000, 5000, t(8));
  await bill('open', 4000, 0, t(-10));
  await bill('open', 100, 0, t(7));
  await bill('paid', 10000, 10000, t(1));
  await bill('draft', 7000, 0, t(1));

  const job = (status: string, date: string, completedAt: string | null = null) =>
    q(sql`INSERT INTO jobs (id, organization_id, customer_id, status, scheduled_date, completed_at)
      VALUES (${id('job')}, ${org}, ${cus}, ${status}, ${date}, ${completedAt}::timestamptz)`);
  await job('scheduled', today);
  await job('in_progress', today);
  await job('canceled', today);
  await job('draft', today);
  await job('in_progress', '2026-03-10');
  await job('completed', '2026-03-15', '2026-04-01T03:00:00Z'); // March 31, 23:00 local: completed in range
  await job('completed', '2026-03-02', '2026-04-01T05:00:00Z'); // April 1, 01:00 local: not
  await job('scheduled', '2026-03-31');
  await job('draft', '2026-03-01');

  const est = (status: string, sentAt: string | null) =>
    q(sql`INSERT INTO estimates (id, organization_id, estimate_number, customer_id, status, estimate_date, expiration_date,
        tax_rate, subtotal_cents, tax_cents, total_cents, sent_at)
      VALUES (${id('est')}, ${org}, ${id('E')}, ${cus}, ${status}, '2026-03-01', '2026-04-30', 0, 100, 0, 100, ${sentAt}::timestamptz)`);
  await est('sent', '2026-03-05T12:00:00Z');
  await est('approved', '2026-03-06T12:00:00Z');
  await est('converted', '2026-03-07T12:00:00Z');
  await est('declined', '2026-03-08T12:00:00Z');
  await est('approved', '2026-03-01T04:00:00Z'); // February 28, 23:00 local: out of range
  await est('draft', null);

  const contract = (status: string, cents: number) =>
    q(sql`INSERT INTO contracts (id, organization_id, title, customer_id, status, content, total_value_cents)
      VALUES (${id('con')}, ${org}, 'Care plan', ${cus}, ${status}, 'text', ${cents})`);
  await contract('active', 120000);
  await contract('active', 30050);
  await contract('signed', 9900);

  const entry = (type: string, start: string, end: string | null) =>
    q(sql`INSERT INTO time_entries (id, organization_id, member_id, user_id, type, started_at, ended_at)
      VALUES (${id('te')}, ${org}, ${member?.id}, ${member?.user_id}, ${type}, ${start}::timestamptz, ${end}::timestamptz)`);
  await entry('work', '2026-03-10T14:00:00Z', '2026-03-10T17:30:00Z'); // 3.5 h
  await entry('work', '2026-04-01T03:00:00Z', '2026-04-01T04:15:00Z'); // March 31 local: 1.25 h
  await entry('work', '2026-04-01T04:30:00Z', '2026-04-01T06:00:00Z'); // April 1 local: out
  await entry('drive', '2026-03-12T14:00:00Z', '2026-03-12T14:20:00Z'); // 0.333… h
  await entry('drive', '2026-03-20T14:00:00Z', null); // open: not counted

  // Winter: storms by startedAt, serviced visits by servicedAt, both in the organization's timezone.
  const prop = id('prp');
  await q(
    sql`INSERT INTO properties (id, organization_id, customer_id, street) VALUES (${prop}, ${org}, ${cus}, '1 Elm St')`,
  );
  const route = id('wrt');
  await q(sql`INSERT INTO winter_routes (id, organization_id, name) VALUES (${route}, ${org}, 'North')`);
  const storm = async (startedAt: string) => {
    const sid = id('stm');
    await q(sql`INSERT INTO storms (id, organization_id, name, started_at, snowfall_inches)
      VALUES (${sid}, ${org}, 'Storm', ${startedAt}::timestamptz, 4)`);
    return sid;
  };
  const s1 = await storm('2026-03-03T10:00:00Z');
  await storm('2026-04-01T03:30:00Z'); // March 31, 23:30 local: in range
  const s3 = await storm('2026-03-01T04:00:00Z'); // February 28, 23:00 local: out of range
  const visit = async (stormId: string, status: string, servicedAt: string | null) => {
    const run = id('wrn');
    await q(
      sql`INSERT INTO winter_runs (id, organization_id, storm_id, route_id) VALUES (${run}, ${org}, ${stormId}, ${route})`,
    );
    await q(sql`INSERT INTO winter_visits (id, organization_id, run_id, stop_id, property_id, customer_id, sequence, services,
        billing_mode, price_cents, status, serviced_at, pushes)
      VALUES (${id('wvs')}, ${org}, ${run}, 'stp_x', ${prop}, ${cus}, 1, ARRAY['plow'], 'per_push', 5000, ${status},
        ${servicedAt}::timestamptz, 1)`);
  };
  await visit(s1, 'serviced', '2026-03-03T12:00:00Z'); // counted
  await visit(s3, 'serviced', '2026-04-01T03:45:00Z'); // March 31, 23:45 local: counted (its storm is not)
  await visit(await storm('2026-05-01T00:00:00Z'), 'serviced', '2026-04-01T04:30:00Z'); // April 1 local: not counted
  await visit(await storm('2026-05-02T00:00:00Z'), 'skipped', '2026-03-10T12:00:00Z'); // skipped: not counted
}

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h, { timezone: TZ });
  empty = await newTenant(h, { timezone: TZ, name: 'Empty' });
  today = todayIn(TZ);
  await seed(owner.organizationId);
});
afterAll(async () => h?.close());

describe('GET /api/dashboard', () => {
  it('answers every figure of a known data set, counted in the organization timezone', async () => {
    const res = await owner.call('GET', `/api/dashboard?${RANGE}`);
    expect(res.statusCode, res.body).toBe(200);
    const d = res.json().data;
    expect(d.revenue).toEqual({ invoiced: 500.5, collected: 65.25 });
    expect(d.receivables).toEqual({
      outstanding: 462.25,
      overdueAmount: 355.25,
      overdueCount: 5,
      aging: { current: 107, days1to30: 205.25, days31to60: 80, days61to90: 40, over90: 30 },
    });
    expect(d.payables).toEqual({ outstanding: 491, dueNext7Days: 341 });
    expect(d.jobs).toEqual({
      scheduledToday: 2,
      inProgress: 2,
      completed: 1,
      byStatus: { draft: 1, scheduled: 1, in_progress: 1, on_hold: 0, completed: 2, canceled: 0 },
    });
    expect(d.estimates).toEqual({ sent: 4, approved: 2, conversionRate: 0.5 });
    expect(d.contracts).toEqual({ active: 2, activeRevenue: 1500.5 });
    expect(d.crew).toEqual({ workHours: 4.75, driveHours: 0.33 });
    expect(d.winter).toEqual({ storms: 2, visitsServiced: 2 });
  });

  it('is zero everywhere for an empty organization, every job status present', async () => {
    const res = await empty.call('GET', '/api/dashboard');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      revenue: { invoiced: 0, collected: 0 },
      receivables: {
        outstanding: 0,
        overdueAmount: 0,
        overdueCount: 0,
        aging: { current: 0, days1to30: 0, days31to60: 0, days61to90: 0, over90: 0 },
      },
      payables: { outstanding: 0, dueNext7Days: 0 },
      jobs: {
        scheduledToday: 0,
        inProgress: 0,
        completed: 0,
        byStatus: { draft: 0, scheduled: 0, in_progress: 0, on_hold: 0, completed: 0, canceled: 0 },
      },
      estimates: { sent: 0, approved: 0, conversionRate: 0 },
      contracts: { active: 0, activeRevenue: 0 },
      crew: { workHours: 0, driveHours: 0 },
      winter: { storms: 0, visitsServiced: 0 },
    });
  });

  it("defaults to this month and sees nothing of another organization's data", async () => {
    const res = await empty.call('GET', `/api/dashboard?${RANGE}`);
    expect(res.json().data.revenue).toEqual({ invoiced: 0, collected: 0 });
    // The owner's jobs scheduled today fall in this month: the default range counts them.
    const mine = (await owner.call('GET', '/api/dashboard')).json().data;
    expect(mine.jobs.byStatus.scheduled).toBeGreaterThanOrEqual(1);
    expect(mine.jobs.byStatus.in_progress).toBeGreaterThanOrEqual(1);
  });

  it('answers 400 when from is after to, or a date is not a date', async () => {
    const res = await owner.call('GET', '/api/dashboard?from=2026-03-02&to=2026-03-01');
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
    expect((await owner.call('GET', '/api/dashboard?from=2026-02-30')).statusCode).toBe(400);
    expect((await owner.call('GET', '/api/dashboard?extra=1')).statusCode).toBe(400);
  });
});

describe('GET /api/dashboard/revenue', () => {
  it('answers weeks starting on Monday, empty weeks included', async () => {
    const res = await owner.call('GET', `/api/dashboard/revenue?interval=week&${RANGE}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual([
      { period: '2026-02-23', invoiced: 0, collected: 0 },
      { period: '2026-03-02', invoiced: 100, collected: 0 },
      { period: '2026-03-09', invoiced: 250.5, collected: 50.25 },
      { period: '2026-03-16', invoiced: 70, collected: 0 },
      { period: '2026-03-23', invoiced: 0, collected: 0 },
      { period: '2026-03-30', invoiced: 80, collected: 15 },
    ]);
  });

  it('answers months, refunds counted on their local day', async () => {
    const res = await owner.call('GET', '/api/dashboard/revenue?interval=month&from=2026-01-01&to=2026-05-31');
    expect(res.json().data).toEqual([
      { period: '2026-01-01', invoiced: 12, collected: 0 },
      { period: '2026-02-01', invoiced: 40, collected: -7 },
      { period: '2026-03-01', invoiced: 500.5, collected: 65.25 },
      { period: '2026-04-01', invoiced: 30, collected: 60 },
      { period: '2026-05-01', invoiced: 0, collected: 0 },
    ]);
  });

  it('answers days, one per day', async () => {
    const res = await owner.call('GET', '/api/dashboard/revenue?interval=day&from=2026-03-30&to=2026-04-01');
    expect(res.json().data).toEqual([
      { period: '2026-03-30', invoiced: 0, collected: 0 },
      { period: '2026-03-31', invoiced: 80, collected: 15 },
      { period: '2026-04-01', invoiced: 30, collected: 60 },
    ]);
  });

  it('defaults to months over the last 12 months, all zero for an empty organization', async () => {
    const res = await empty.call('GET', '/api/dashboard/revenue');
    expect(res.statusCode, res.body).toBe(200);
    const data = res.json().data as Array<{ period: string; invoiced: number; collected: number }>;
    expect(data).toHaveLength(12);
    expect(data.at(-1)?.period).toBe(`${today.slice(0, 7)}-01`);
    expect(data.every((p) => p.period.endsWith('-01') && p.invoiced === 0 && p.collected === 0)).toBe(true);
  });

  it('answers 400 for from after to, an unknown interval, or too many periods', async () => {
    for (const query of [
      'from=2026-03-02&to=2026-03-01',
      'interval=year',
      'interval=day&from=2000-01-01&to=2026-01-01',
    ]) {
      const res = await owner.call('GET', `/api/dashboard/revenue?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json().error.code, query).toBe('VALIDATION_FAILED');
    }
  });
});

describe('figures kept by the other modules for the dashboard', () => {
  it('counts a job completed through the API today, and a member may read the dashboard', async () => {
    const user = await newTenant(h, { timezone: TZ, name: 'Live' });
    const day = todayIn(TZ);
    const customer = (await user.call('POST', '/api/customers', { firstName: 'Live' })).json().data;
    const job = (await user.call('POST', '/api/jobs', { customerId: customer.id, scheduledDate: day })).json().data;
    expect((await user.call('PATCH', `/api/jobs/${job.id}`, { status: 'in_progress' })).statusCode).toBe(200);
    let d = (await user.call('GET', `/api/dashboard?from=${day}&to=${day}`)).json().data;
    expect(d.jobs).toMatchObject({ scheduledToday: 1, inProgress: 1, completed: 0 });
    expect((await user.call('PATCH', `/api/jobs/${job.id}`, { status: 'completed' })).statusCode).toBe(200);
    // A note on the completed job later does not move its completion.
    expect((await user.call('PATCH', `/api/jobs/${job.id}`, { notes: 'done' })).statusCode).toBe(200);
    const member = await addMember(h, user, 'member');
    const res = await member.call('GET', `/api/dashboard?from=${day}&to=${day}`);
    expect(res.statusCode, res.body).toBe(200);
    d = res.json().data;
    expect(d.jobs).toMatchObject({ scheduledToday: 1, inProgress: 0, completed: 1 });
    expect(d.jobs.byStatus.completed).toBe(1);
    expect((await member.call('GET', '/api/dashboard/revenue')).statusCode).toBe(200);
  });

  it('counts an estimate by its first send: a resend keeps sentAt', async () => {
    const user = await newTenant(h, { timezone: TZ, name: 'Estimates' });
    const day = todayIn(TZ);
    const customer = (await user.call('POST', '/api/customers', { firstName: 'Est', email: 'est@example.com' })).json()
      .data;
    const est = (
      await user.call('POST', '/api/estimates', {
        customerId: customer.id,
        lineItems: [{ description: 'Cleanup', quantity: 1, unitPrice: 100 }],
      })
    ).json().data;
    const first = await user.call('POST', `/api/estimates/${est.id}/send`);
    expect(first.statusCode, first.body).toBe(200);
    const again = await user.call('POST', `/api/estimates/${est.id}/send`);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().data.sentAt).toBe(first.json().data.sentAt);
    const d = (await user.call('GET', `/api/dashboard?from=${day}&to=${day}`)).json().data;
    expect(d.estimates).toEqual({ sent: 1, approved: 0, conversionRate: 0 });
  });
});
