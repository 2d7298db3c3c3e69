import { and, count, eq, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { invoices, jobs } from '../../src/db/schema/index.js';
import { createCustomer, createProperty, eventsDuring, line, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * From work to cash (operations.md §9): estimate → job, jobs → invoices, batch
 * invoicing. A refused call writes nothing: the tests count invoices and billed jobs.
 */
describe('billing the work', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let taxed: string;
  let exempt: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    other = await newTenant(h, { name: 'Other Co' });
    await setSettings(h, owner.organizationId, { taxRate: 10 });
    taxed = (await createCustomer(h, owner)).id;
    exempt = (await createCustomer(h, owner, { taxExempt: true })).id;
  });
  afterAll(async () => h?.close());

  const invoiceCount = async (orgId = owner.organizationId) =>
    Number((await h.admin.db.select({ n: count() }).from(invoices).where(eq(invoices.organizationId, orgId)))[0]?.n);
  const billedCount = async () =>
    Number(
      (
        await h.admin.db
          .select({ n: count() })
          .from(jobs)
          .where(and(eq(jobs.organizationId, owner.organizationId), isNotNull(jobs.invoiceId)))
      )[0]?.n,
    );

  /** A job with lines, moved to `status` through the API. */
  async function job(
    customerId: string,
    scheduledDate: string,
    lineItems: unknown[] = [line('Weekly mowing', 1, 45)],
    status = 'completed',
    as: TestUser = owner,
  ) {
    const res = await as.call('POST', '/api/jobs', { customerId, scheduledDate, lineItems });
    expect(res.statusCode, res.body).toBe(201);
    const id = res.json().data.id as string;
    if (status !== 'scheduled') {
      expect((await as.call('PATCH', `/api/jobs/${id}`, { status })).statusCode).toBe(200);
    }
    return id;
  }

  describe('POST /api/estimates/{id}/convert-to-job', () => {
    it('turns an approved estimate into a priced job once; other states are 409 INVALID_STATE', async () => {
      const prop = await createProperty(h, owner, taxed);
      const est = (
        await owner.call('POST', '/api/estimates', {
          customerId: taxed,
          propertyId: prop.id,
          lineItems: [line('Spring clean-up', 1, 180), line('Mulch (yd)', 3, 65)],
          notes: 'Back beds too',
        })
      ).json().data;
      const early = await owner.call('POST', `/api/estimates/${est.id}/convert-to-job`, {
        scheduledDate: '2026-04-20',
      });
      expect(early.statusCode).toBe(409);
      expect(early.json().error.code).toBe('INVALID_STATE');

      await owner.call('POST', `/api/estimates/${est.id}/send`);
      expect((await owner.call('POST', `/api/estimates/${est.id}/approve`)).statusCode).toBe(200);
      const events = await eventsDuring(h, owner.organizationId, async () => {
        const res = await owner.call('POST', `/api/estimates/${est.id}/convert-to-job`, {
          scheduledDate: '2026-04-20',
        });
        expect(res.statusCode, res.body).toBe(201);
        const { estimate, job: made } = res.json().data;
        expect(estimate).toMatchObject({ id: est.id, status: 'approved', jobId: made.id, invoiceId: null });
        expect(made).toMatchObject({
          customerId: taxed,
          propertyId: prop.id,
          status: 'scheduled',
          scheduledDate: '2026-04-20',
          notes: 'Back beds too',
          total: 375,
          invoiceId: null,
        });
        expect(made.lineItems.map((l: { description: string; amount: number }) => [l.description, l.amount])).toEqual([
          ['Spring clean-up', 180],
          ['Mulch (yd)', 195],
        ]);
      });
      expect(events.map((e) => e.type)).toEqual(['job.created']);

      const again = await owner.call('POST', `/api/estimates/${est.id}/convert-to-job`, {
        scheduledDate: '2026-04-21',
      });
      expect(again.statusCode).toBe(409);
      expect(again.json().error.code).toBe('CONFLICT');
      // The job is what gets billed: the estimate no longer becomes an invoice too.
      const toInvoice = await owner.call('POST', `/api/estimates/${est.id}/convert`);
      expect(toInvoice.statusCode).toBe(409);
      expect(toInvoice.json().error.code).toBe('CONFLICT');
    });

    it('another organization’s estimate is 404; a bad date is 400', async () => {
      const est = (await owner.call('POST', '/api/estimates', { customerId: taxed, lineItems: [line()] })).json().data;
      const foreign = await other.call('POST', `/api/estimates/${est.id}/convert-to-job`, {
        scheduledDate: '2026-04-20',
      });
      expect(foreign.statusCode).toBe(404);
      const bad = await owner.call('POST', `/api/estimates/${est.id}/convert-to-job`, { scheduledDate: 'soon' });
      expect(bad.statusCode).toBe(400);
    });
  });

  describe('POST /api/invoices/from-jobs', () => {
    it('makes one draft per customer, one dated line per job line, tax as for any invoice, and marks the jobs', async () => {
      const a1 = await job(taxed, '2026-11-03', [line('Weekly mowing', 1, 45), line('Edging', 0.5, 30)]);
      const a2 = await job(taxed, '2026-10-27', [line('Weekly mowing', 1, 45)]);
      const b1 = await job(exempt, '2026-11-04', [line('Leaf cleanup', 2, 37.5)]);
      const events = await eventsDuring(h, owner.organizationId, async () => {
        const res = await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [a1, b1, a2] });
        expect(res.statusCode, res.body).toBe(201);
        const [first, second] = res.json().data.invoices;
        expect(res.json().data.invoices).toHaveLength(2);
        expect(first).toMatchObject({ customerId: taxed, status: 'draft', subtotal: 105, taxRate: 10, tax: 10.5 });
        expect(first.total).toBe(115.5);
        expect(first.lineItems.map((l: { description: string }) => l.description)).toEqual([
          '2026-10-27 — Weekly mowing',
          '2026-11-03 — Weekly mowing',
          '2026-11-03 — Edging',
        ]);
        expect(second).toMatchObject({ customerId: exempt, taxRate: 0, total: 75 });
        for (const [id, inv] of [
          [a1, first],
          [a2, first],
          [b1, second],
        ]) {
          const got = (await owner.call('GET', `/api/jobs/${id}`)).json().data;
          expect(got.invoiceId).toBe(inv.id);
          expect(got.activity.at(-1)).toMatchObject({
            type: 'invoiced',
            message: `Billed on invoice ${inv.invoiceNumber}`,
          });
        }
      });
      expect(events.map((e) => e.type)).toEqual(['invoice.created', 'invoice.created']);
    });

    it('send: true sends each invoice (and posts it to the ledger)', async () => {
      const j = await job(taxed, '2026-11-05');
      const res = await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [j], send: true });
      expect(res.statusCode, res.body).toBe(201);
      const [inv] = res.json().data.invoices;
      expect(inv).toMatchObject({ status: 'sent', total: 49.5 });
      const entries = (await owner.call('GET', `/api/ledger/entries?sourceId=${inv.id}`)).json().data;
      expect(entries).toHaveLength(1);
    });

    it('refuses, naming the job, and writes nothing: not completed, no lines, billed, foreign or unknown', async () => {
      const good = await job(taxed, '2026-11-06');
      const open = await job(taxed, '2026-11-06', [line()], 'in_progress');
      const bare = await job(taxed, '2026-11-06', []);
      const billed = await job(taxed, '2026-11-06');
      expect((await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [billed] })).statusCode).toBe(201);
      const foreignCustomer = (await createCustomer(h, other)).id;
      const foreign = await job(foreignCustomer, '2026-11-06', [line()], 'completed', other);

      const invoicesBefore = await invoiceCount();
      const billedBefore = await billedCount();
      const cases: Array<[string[], number, string, string]> = [
        [[good, open], 409, 'INVALID_STATE', open],
        [[good, bare], 409, 'INVALID_STATE', bare],
        [[good, billed], 409, 'CONFLICT', billed],
        [[good, foreign], 400, 'VALIDATION_FAILED', foreign],
        [[good, 'job_missing'], 400, 'VALIDATION_FAILED', 'job_missing'],
      ];
      for (const [jobIds, status, code, named] of cases) {
        const res = await owner.call('POST', '/api/invoices/from-jobs', { jobIds });
        expect(res.statusCode, res.body).toBe(status);
        expect(res.json().error.code).toBe(code);
        expect(res.body).toContain(named);
        if (status === 400) expect(res.json().error.details[0].field).toBe('jobIds');
      }
      expect(await invoiceCount()).toBe(invoicesBefore);
      expect(await billedCount()).toBe(billedBefore);
      expect((await owner.call('GET', `/api/jobs/${good}`)).json().data.invoiceId).toBeNull();
      expect((await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [] })).statusCode).toBe(400);
      expect((await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [good, good] })).statusCode).toBe(400);
    });

    it('deleting the draft invoice frees its jobs to be billed again', async () => {
      const j = await job(taxed, '2026-11-08');
      const inv = (await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [j] })).json().data.invoices[0];
      expect((await owner.call('DELETE', `/api/invoices/${inv.id}`)).statusCode).toBe(204);
      expect((await owner.call('GET', `/api/jobs/${j}`)).json().data.invoiceId).toBeNull();
      const again = await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [j] });
      expect(again.statusCode, again.body).toBe(201);
    });

    it('two concurrent calls bill a job once', async () => {
      const j = await job(exempt, '2026-11-07');
      const before = await invoiceCount();
      const results = await Promise.all([
        owner.call('POST', '/api/invoices/from-jobs', { jobIds: [j] }),
        owner.call('POST', '/api/invoices/from-jobs', { jobIds: [j] }),
      ]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409]);
      expect(results.find((r) => r.statusCode === 409)?.json().error.code).toBe('CONFLICT');
      expect(await invoiceCount()).toBe(before + 1);
    });
  });

  describe('POST /api/invoices/batch', () => {
    /** Sets when a job was completed (the batch reads completion dates in the org's timezone). */
    const completedOn = (id: string, at: string) =>
      h.admin.db
        .update(jobs)
        .set({ completedAt: new Date(at) })
        .where(eq(jobs.id, id));

    it('bills the completed, unbilled, priced jobs completed in the range, one invoice per customer', async () => {
      const fresh = await newTenant(h, { name: 'Batch Co', timezone: 'America/Chicago' });
      const c1 = (await createCustomer(h, fresh)).id;
      const c2 = (await createCustomer(h, fresh)).id;
      const inside1 = await job(c1, '2026-10-06', [line('Mow', 1, 40)], 'completed', fresh);
      const inside2 = await job(c1, '2026-10-13', [line('Mow', 1, 40)], 'completed', fresh);
      const inside3 = await job(c2, '2026-10-31', [line('Mow', 1, 50)], 'completed', fresh);
      const lateNight = await job(c2, '2026-11-01', [line('Mow', 1, 50)], 'completed', fresh);
      const bare = await job(c2, '2026-10-20', [], 'completed', fresh);
      const open = await job(c2, '2026-10-20', [line()], 'scheduled', fresh);
      await completedOn(inside1, '2026-10-06T15:00:00Z');
      await completedOn(inside2, '2026-10-13T15:00:00Z');
      // 2026-11-01T04:30Z is still October 31st in Chicago; 05:30Z on Nov 1st is not.
      await completedOn(inside3, '2026-11-01T04:30:00Z');
      await completedOn(lateNight, '2026-11-01T05:30:00Z');
      await completedOn(bare, '2026-10-20T15:00:00Z');

      const refused = await fresh.call('POST', '/api/invoices/batch', { from: '2026-10-31', to: '2026-10-01' });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error.details[0].field).toBe('from');
      const foreign = await fresh.call('POST', '/api/invoices/batch', {
        from: '2026-10-01',
        to: '2026-10-31',
        customerIds: [taxed],
      });
      expect(foreign.statusCode).toBe(400);
      expect(await invoiceCount(fresh.organizationId)).toBe(0);

      const res = await fresh.call('POST', '/api/invoices/batch', { from: '2026-10-01', to: '2026-10-31' });
      expect(res.statusCode, res.body).toBe(201);
      const made = res.json().data.invoices as Array<{ customerId: string; total: number; lineItems: unknown[] }>;
      expect(made.map((i) => [i.customerId, i.total, i.lineItems.length]).sort()).toEqual(
        [
          [c1, 80, 2],
          [c2, 50, 1],
        ].sort(),
      );
      for (const id of [lateNight, bare, open]) {
        expect((await fresh.call('GET', `/api/jobs/${id}`)).json().data.invoiceId).toBeNull();
      }
      // Nothing left to bill in that range; only c2 asked for, with send.
      const again = await fresh.call('POST', '/api/invoices/batch', { from: '2026-10-01', to: '2026-10-31' });
      expect(again.json().data.invoices).toEqual([]);
      const nov = await fresh.call('POST', '/api/invoices/batch', {
        from: '2026-11-01',
        to: '2026-11-30',
        customerIds: [c2],
        send: true,
      });
      expect(nov.json().data.invoices.map((i: { status: string; total: number }) => [i.status, i.total])).toEqual([
        ['sent', 50],
      ]);
    });
  });
});
