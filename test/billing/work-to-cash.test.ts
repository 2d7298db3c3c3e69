import { and, asc, count, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { estimates, invoices, jobs } from '../../src/db/schema/index.js';
import { billSchedules } from '../../src/flows/bill-schedules.js';
import { today as todayIn } from '../../src/platform/dates.js';
import { createCustomer, line, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Issue 28's "done when", tried as a new owner would, through HTTP: sell → do → bill
 * (estimate → job → completed → invoice → ledger), and the schedules' billing modes
 * wired for real: per visit on completion, the monthly batch and installments by the
 * worker's pass (driven with its `now`), each bill made once, also when two passes race
 * on two pools (two connections on PostgreSQL, as two worker processes).
 */

const TZ = 'America/Chicago';

describe('from work to cash', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let customerId: string;
  const deps = () => ({ baseUrl: h.config.baseUrl });

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: TZ });
    other = await newTenant(h, { name: 'Other Co' });
    await setSettings(h, owner.organizationId, { taxRate: 8 });
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  const invoicesOf = (customer: string) =>
    h.admin.db
      .select()
      .from(invoices)
      .where(and(eq(invoices.organizationId, owner.organizationId), eq(invoices.customerId, customer)))
      .orderBy(asc(invoices.invoiceDate), asc(invoices.invoiceNumber));
  const invoiceCount = async (orgId = owner.organizationId) =>
    Number((await h.admin.db.select({ n: count() }).from(invoices).where(eq(invoices.organizationId, orgId)))[0]?.n);
  const jobCount = async () =>
    Number(
      (await h.admin.db.select({ n: count() }).from(jobs).where(eq(jobs.organizationId, owner.organizationId)))[0]?.n,
    );
  const ledgerOf = async (invoiceId: string) =>
    (await owner.call('GET', `/api/ledger/entries?sourceId=${invoiceId}`)).json().data as Array<{
      lines: Array<{ accountCode: string; debit: number; credit: number }>;
    }>;

  const postSchedule = (customer: string, billing: object, extra: object = {}) =>
    owner.call('POST', '/api/jobs/schedules', {
      customerId: customer,
      title: 'Weekly mowing',
      rrule: 'FREQ=DAILY',
      startDate: todayIn(TZ),
      lineItems: [line('Weekly mowing', 1, 45)],
      billing,
      ...extra,
    });
  async function schedule(customer: string, billing: object, extra: object = {}) {
    const res = await postSchedule(customer, billing, extra);
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id as string;
  }
  const visitsOf = async (scheduleId: string) =>
    (
      await h.admin.db
        .select({ id: jobs.id })
        .from(jobs)
        .where(eq(jobs.scheduleId, scheduleId))
        .orderBy(asc(jobs.occurrenceDate))
    ).map((r) => r.id);
  const complete = (id: string) => owner.call('PATCH', `/api/jobs/${id}`, { status: 'completed' });

  describe('estimate → job → completed → invoice → ledger', () => {
    async function approvedEstimate() {
      const est = (
        await owner.call('POST', '/api/estimates', {
          customerId,
          lineItems: [line('Spring clean-up', 1, 180), line('Mulch (yd)', 3, 65)],
        })
      ).json().data;
      await owner.call('POST', `/api/estimates/${est.id}/send`);
      expect((await owner.call('POST', `/api/estimates/${est.id}/approve`)).statusCode).toBe(200);
      return est.id as string;
    }

    it('a new owner sells, does and bills the work, and sees the invoice and its ledger entry', async () => {
      const crew = (await owner.call('POST', '/api/crew-tracking/crews', { name: 'Crew A' })).json().data;
      const estimateId = await approvedEstimate();
      const converted = await owner.call('POST', `/api/estimates/${estimateId}/convert-to-job`, {
        scheduledDate: '2026-04-20',
        startTime: '08:30',
        crewId: crew.id,
        assignedTo: [owner.userId],
      });
      expect(converted.statusCode, converted.body).toBe(201);
      const { job } = converted.json().data;
      expect(job).toMatchObject({
        startTime: '08:30',
        crewId: crew.id,
        assignedTo: [owner.userId],
        total: 375,
        invoiceId: null,
      });
      expect(job.startsAt).toBe('2026-04-20T13:30:00.000Z');

      expect((await complete(job.id)).json().data).toMatchObject({ status: 'completed', invoiceId: null });
      const billed = await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [job.id], send: true });
      expect(billed.statusCode, billed.body).toBe(201);
      const [made] = billed.json().data.invoices;
      const invoice = (await owner.call('GET', `/api/invoices/${made.id}`)).json().data;
      expect(invoice).toMatchObject({ status: 'sent', subtotal: 375, tax: 30, total: 405, customerId });
      expect(invoice.lineItems.map((l: { description: string }) => l.description)).toEqual([
        '2026-04-20 — Spring clean-up',
        '2026-04-20 — Mulch (yd)',
      ]);
      expect((await owner.call('GET', `/api/jobs/${job.id}`)).json().data.invoiceId).toBe(made.id);
      const [entry] = await ledgerOf(made.id);
      expect(entry?.lines).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ accountCode: '1100', debit: 405 }),
          expect.objectContaining({ accountCode: '4000', credit: 375 }),
          expect.objectContaining({ accountCode: '2100', credit: 30 }),
        ]),
      );
    });

    it('convert-to-job checks the job as POST /api/jobs does: 400 naming the field, nothing written', async () => {
      const estimateId = await approvedEstimate();
      const foreignCrew = (await other.call('POST', '/api/crew-tracking/crews', { name: 'Theirs' })).json().data;
      const jobsBefore = await jobCount();
      for (const [body, field] of [
        [{ scheduledDate: '2026-04-20', crewId: foreignCrew.id }, 'crewId'],
        [{ scheduledDate: '2026-04-20', startTime: '8am' }, 'startTime'],
        [{ scheduledDate: '2026-04-20', assignedTo: [other.userId] }, 'assignedTo'],
      ] as const) {
        const res = await owner.call('POST', `/api/estimates/${estimateId}/convert-to-job`, body);
        expect(res.statusCode, res.body).toBe(400);
        expect(
          res
            .json()
            .error.details.map((d: { field: string }) => d.field)
            .join(' '),
        ).toContain(field);
      }
      expect(await jobCount()).toBe(jobsBefore);
      const [row] = await h.admin.db.select().from(estimates).where(eq(estimates.id, estimateId));
      expect(row).toMatchObject({ jobId: null, status: 'approved' });
    });
  });

  describe('per visit', () => {
    it('completing a visit bills it in the same request, once; autoSend sends and posts it', async () => {
      const customer = (await createCustomer(h, owner)).id;
      const id = await schedule(customer, { mode: 'per_visit', autoSend: true });
      const [first, second] = await visitsOf(id);
      const done = await complete(first as string);
      expect(done.statusCode, done.body).toBe(200);
      const invoiceId = done.json().data.invoiceId as string;
      expect(invoiceId).toMatch(/^inv_/);
      const invoice = (await owner.call('GET', `/api/invoices/${invoiceId}`)).json().data;
      expect(invoice).toMatchObject({ status: 'sent', customerId: customer, subtotal: 45, tax: 3.6, total: 48.6 });
      expect(await ledgerOf(invoiceId)).toHaveLength(1);

      // Completing it again is refused (completed is final): no second invoice.
      expect((await complete(first as string)).statusCode).toBe(409);
      expect(await invoicesOf(customer)).toHaveLength(1);
      // A change that does not complete the visit bills nothing.
      await owner.call('PATCH', `/api/jobs/${second}`, { status: 'in_progress' });
      expect(await invoicesOf(customer)).toHaveLength(1);
    });

    it('without autoSend the invoice is a draft; batch, none and one-off jobs are not billed on completion', async () => {
      const customer = (await createCustomer(h, owner)).id;
      const [draftVisit] = await visitsOf(await schedule(customer, { mode: 'per_visit' }));
      const [batchVisit] = await visitsOf(await schedule(customer, { mode: 'batch' }));
      const [noneVisit] = await visitsOf(await schedule(customer, { mode: 'none' }));
      const draft = (await complete(draftVisit as string)).json().data;
      expect((await owner.call('GET', `/api/invoices/${draft.invoiceId}`)).json().data.status).toBe('draft');
      expect(await ledgerOf(draft.invoiceId)).toHaveLength(0);
      expect((await complete(batchVisit as string)).json().data.invoiceId).toBeNull();
      expect((await complete(noneVisit as string)).json().data.invoiceId).toBeNull();
      expect(await invoicesOf(customer)).toHaveLength(1);
    });
  });

  describe('monthly batch, by the worker', () => {
    it('October’s completed visits become one invoice per customer on November 1st, once', async () => {
      const ann = (await createCustomer(h, owner)).id;
      const bob = (await createCustomer(h, owner)).id;
      const annVisits = await visitsOf(await schedule(ann, { mode: 'batch', autoSend: true }));
      const bobVisits = await visitsOf(await schedule(bob, { mode: 'batch' }));
      const [perVisit] = await visitsOf(await schedule(bob, { mode: 'none' }));
      const completedOn = async (id: string, at: string) => {
        expect((await complete(id)).statusCode).toBe(200);
        await h.admin.db
          .update(jobs)
          .set({ completedAt: new Date(at) })
          .where(eq(jobs.id, id));
      };
      await completedOn(annVisits[0] as string, '2026-10-06T16:00:00Z');
      await completedOn(annVisits[1] as string, '2026-10-13T16:00:00Z');
      // 11:30 pm on October 31st in Chicago: still October there.
      await completedOn(bobVisits[0] as string, '2026-11-01T04:30:00Z');
      await completedOn(bobVisits[1] as string, '2026-11-02T16:00:00Z');
      await completedOn(perVisit as string, '2026-10-20T16:00:00Z');

      // October 31st in Chicago (already November 1st in UTC): nothing is due yet.
      expect(await billSchedules(h.database.db, deps(), new Date('2026-11-01T04:45:00Z'))).toBe(0);
      // November 1st, early in Chicago, run by two workers at once on two pools.
      const nov1 = new Date('2026-11-01T06:00:00Z');
      const [a, b] = await Promise.all([
        billSchedules(h.database.db, deps(), nov1),
        billSchedules(h.admin.db, deps(), nov1),
      ]);
      expect(a + b).toBe(2);
      expect(await billSchedules(h.database.db, deps(), new Date('2026-11-02T06:00:00Z'))).toBe(0);

      const [annInvoice, ...annMore] = await invoicesOf(ann);
      expect(annMore).toHaveLength(0);
      expect(annInvoice).toMatchObject({ status: 'sent', subtotalCents: 9000 });
      const [bobInvoice, ...bobMore] = await invoicesOf(bob);
      expect(bobMore).toHaveLength(0);
      expect(bobInvoice).toMatchObject({ status: 'draft', subtotalCents: 4500 });
      const lines = (await owner.call('GET', `/api/invoices/${annInvoice?.id}`)).json().data.lineItems;
      expect(lines).toHaveLength(2);
      expect(await ledgerOf(annInvoice?.id as string)).toHaveLength(1);

      const billed = await h.admin.db
        .select({ id: jobs.id, invoiceId: jobs.invoiceId })
        .from(jobs)
        .where(inArray(jobs.id, [...annVisits.slice(0, 2), ...bobVisits.slice(0, 2), perVisit as string]));
      const invoiceOf = new Map(billed.map((r) => [r.id, r.invoiceId]));
      expect(invoiceOf.get(annVisits[0] as string)).toBe(annInvoice?.id);
      expect(invoiceOf.get(bobVisits[0] as string)).toBe(bobInvoice?.id);
      // November's visit waits for December 1st; a schedule billed `none` is never batched.
      expect(invoiceOf.get(bobVisits[1] as string)).toBeNull();
      expect(invoiceOf.get(perVisit as string)).toBeNull();

      // An October visit that became billable after October's batch (its completion, dated
      // October 20th, committed later) is not billed on its own mid-month: it goes on the
      // customer's next batch, December 1st, with November's visits.
      await completedOn(annVisits[2] as string, '2026-10-20T16:00:00Z');
      expect(await billSchedules(h.database.db, deps(), new Date('2026-11-15T18:00:00Z'))).toBe(0);
      // (The pass's own count also takes in other tests' visits of this organization.)
      await billSchedules(h.database.db, deps(), new Date('2026-12-01T07:00:00Z'));
      expect(await invoicesOf(bob)).toHaveLength(2);
      const annAll = await invoicesOf(ann);
      expect(annAll).toHaveLength(2);
      expect(annAll[1]).toMatchObject({ subtotalCents: 4500 });
      const [late] = await h.admin.db
        .select({ invoiceId: jobs.invoiceId })
        .from(jobs)
        .where(eq(jobs.id, annVisits[2] as string));
      expect(late?.invoiceId).toBe(annAll[1]?.id);
      await billSchedules(h.database.db, deps(), new Date('2026-12-02T07:00:00Z'));
      expect(await invoicesOf(ann)).toHaveLength(2);
    });
  });

  describe('installments, by the worker', () => {
    it('a $1,800 season in six makes six $300 invoices on their dates, each once, also when two passes race', async () => {
      const customer = (await createCustomer(h, owner)).id;
      // No amounts and no contract: one visit's lines × the rule's occurrences, $150 × 12.
      await schedule(
        customer,
        { mode: 'installments', count: 6, firstDate: '2027-04-01', every: 'month' },
        { rrule: 'FREQ=WEEKLY;BYDAY=MO;COUNT=12', lineItems: [line('Season', 1, 150)] },
      );
      const pass = (at: string, db = h.database.db) => billSchedules(db, deps(), new Date(at));
      expect(await pass('2027-03-31T12:00:00Z')).toBe(0);
      // April 1st, 1 am in Chicago.
      expect(await pass('2027-04-01T06:00:00Z')).toBe(1);
      expect(await pass('2027-04-02T06:00:00Z')).toBe(0);
      // The worker was down in May: June 15th makes May's and June's.
      expect(await pass('2027-06-15T12:00:00Z')).toBe(2);
      const [a, b] = await Promise.all([pass('2027-12-01T12:00:00Z'), pass('2027-12-01T12:00:00Z', h.admin.db)]);
      expect(a + b).toBe(3);
      expect(await pass('2028-01-01T12:00:00Z')).toBe(0);

      const made = await invoicesOf(customer);
      expect(made.map((i) => [i.invoiceDate, i.totalCents, i.status])).toEqual(
        ['2027-04-01', '2027-05-01', '2027-06-01', '2027-07-01', '2027-08-01', '2027-09-01'].map((d) => [
          d,
          30_000,
          'draft',
        ]),
      );
      const first = (await owner.call('GET', `/api/invoices/${made[0]?.id}`)).json().data;
      expect(first.lineItems[0].description).toBe('Installment 1 of 6 — Weekly mowing');
      // Sent like any invoice, it is posted like any invoice.
      expect((await owner.call('POST', `/api/invoices/${first.id}/send`)).statusCode).toBe(200);
      expect(await ledgerOf(first.id)).toHaveLength(1);
    });

    it('given amounts are split to the cent as given; bad plans are 400 naming billing.amounts, nothing written', async () => {
      const customer = (await createCustomer(h, owner)).id;
      await schedule(customer, {
        mode: 'installments',
        amounts: [333.33, 333.33, 333.34],
        count: 3,
        firstDate: '2027-01-15',
        every: 'month',
      });
      await billSchedules(h.database.db, deps(), new Date('2027-03-20T12:00:00Z'));
      expect((await invoicesOf(customer)).map((i) => i.totalCents)).toEqual([33_333, 33_333, 33_334]);

      const before = await invoiceCount();
      const refused = [
        // Three amounts for a count of two.
        { mode: 'installments', amounts: [1, 2, 3], count: 2, firstDate: '2027-01-15', every: 'month' },
        // Nothing to split: no amounts, no contract, and a rule that never ends.
        { mode: 'installments', count: 6, firstDate: '2027-01-15', every: 'month' },
      ];
      for (const billing of refused) {
        const res = await postSchedule(customer, billing, { rrule: 'FREQ=WEEKLY;BYDAY=MO' });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().error.details[0].field).toBe('billing.amounts');
      }
      expect(await invoiceCount()).toBe(before);
    });
  });
});
