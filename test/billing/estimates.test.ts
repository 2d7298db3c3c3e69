import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredEstimates } from '../../src/modules/estimates/estimates.tasks.js';
import { sweepOverdueInvoices } from '../../src/modules/invoices/invoices.tasks.js';
import { createCustomer, createProperty, eventsDuring, eventsOf, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

describe('estimates', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  const create = (body: Record<string, unknown>) => owner.call('POST', '/api/estimates', body);

  it('creates with defaults (expires after 30 days) and emits estimate.created', async () => {
    const prop = await createProperty(h, owner, customerId);
    const emitted = await eventsDuring(h, owner.organizationId, async () => {
      const res = await create({
        customerId,
        propertyId: prop.id,
        lineItems: [line('Hedge', 2, 12.5)],
        estimateDate: '2026-04-01',
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toMatchObject({
        status: 'draft',
        estimateDate: '2026-04-01',
        expirationDate: '2026-05-01',
        subtotal: 25,
        total: 25,
        propertyId: prop.id,
        invoiceId: null,
      });
    });
    expect(emitted.map((e) => e.type)).toEqual(['estimate.created']);
    expect(emitted[0]?.data).toMatchObject({ estimateNumber: expect.stringMatching(/^EST-\d{6}$/) });
  });

  it('refuses bad input with 400 and writes nothing', async () => {
    const before = await eventsOf(h, owner.organizationId);
    for (const [body, field] of [
      [{ customerId, lineItems: [] }, 'lineItems'],
      [{ customerId, lineItems: [line('x', 1, 9.999)] }, 'lineItems.0.unitPrice'],
      [{ customerId: 'cus_missing', lineItems: [line()] }, 'customerId'],
      [{ customerId, lineItems: [line()], estimateDate: '2026-05-02', expirationDate: '2026-05-01' }, 'expirationDate'],
      [{ customerId, lineItems: [line()], expirationDate: 'soon' }, 'expirationDate'],
    ] as const) {
      const res = await create(body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.details[0].field).toBe(field);
    }
    expect(await eventsOf(h, owner.organizationId)).toEqual(before);
  });

  it('limits edits: full in draft, expirationDate/notes when sent or viewed, none after', async () => {
    const est = (await create({ customerId, lineItems: [line()], estimateDate: '2026-04-01' })).json().data;
    const edited = await owner.call('PUT', `/api/estimates/${est.id}`, { lineItems: [line('New', 3, 1.1)] });
    expect(edited.json().data).toMatchObject({ subtotal: 3.3, lineItems: [{ description: 'New', amount: 3.3 }] });
    await owner.call('POST', `/api/estimates/${est.id}/send`);
    const ok = await owner.call('PUT', `/api/estimates/${est.id}`, {
      expirationDate: '2026-06-01',
      notes: 'valid longer',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json().data).toMatchObject({ expirationDate: '2026-06-01', notes: 'valid longer', status: 'sent' });
    const refused = await owner.call('PUT', `/api/estimates/${est.id}`, { lineItems: [line()] });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('INVALID_STATE');
    expect((await owner.call('DELETE', `/api/estimates/${est.id}`)).statusCode).toBe(409);
    await owner.call('POST', `/api/estimates/${est.id}/approve`);
    expect((await owner.call('PUT', `/api/estimates/${est.id}`, { notes: 'x' })).statusCode).toBe(409);

    const draft = (await create({ customerId, lineItems: [line()] })).json().data;
    expect((await owner.call('DELETE', `/api/estimates/${draft.id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/estimates/${draft.id}`)).statusCode).toBe(404);
  });

  it('lists newest first, filters by status and customer', async () => {
    const c = await createCustomer(h, owner);
    const a = (await create({ customerId: c.id, lineItems: [line()] })).json().data;
    const b = (await create({ customerId: c.id, lineItems: [line()] })).json().data;
    await owner.call('POST', `/api/estimates/${a.id}/send`);
    const all = await owner.call('GET', `/api/estimates?customerId=${c.id}&includeTotal=true`);
    expect(all.headers['x-total-count']).toBe('2');
    expect(all.json().data.map((e: { id: string }) => e.id)).toEqual([b.id, a.id]);
    const sent = await owner.call('GET', `/api/estimates?customerId=${c.id}&status=sent`);
    expect(sent.json().data.map((e: { id: string }) => e.id)).toEqual([a.id]);
    expect((await owner.call('GET', '/api/estimates?status=nope')).statusCode).toBe(400);
  });
});

describe('time-driven sweeps use each organization’s own "today"', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.close());

  it('an invoice due 2026-06-10 is overdue on 06-11 in UTC but not yet in Los Angeles', async () => {
    const utc = await newTenant(h, { name: 'UTC Co' });
    const la = await newTenant(h, { name: 'LA Co', timezone: 'America/Los_Angeles' });
    const ids: Record<string, string> = {};
    for (const [name, who] of [
      ['utc', utc],
      ['la', la],
    ] as const) {
      const c = await createCustomer(h, who);
      const inv = (
        await who.call('POST', '/api/invoices', {
          customerId: c.id,
          lineItems: [line()],
          invoiceDate: '2026-06-01',
          dueDate: '2026-06-10',
        })
      ).json().data;
      await who.call('POST', `/api/invoices/${inv.id}/send`);
      const est = (
        await who.call('POST', '/api/estimates', {
          customerId: c.id,
          lineItems: [line()],
          estimateDate: '2026-06-01',
          expirationDate: '2026-06-10',
        })
      ).json().data;
      await who.call('POST', `/api/estimates/${est.id}/send`);
      ids[`${name}Inv`] = inv.id;
      ids[`${name}Est`] = est.id;
    }
    const status = async (who: TestUser, kind: string, id: string | undefined) =>
      (await who.call('GET', `/api/${kind}/${id}`)).json().data.status;

    // 2026-06-11 05:00Z = 2026-06-10 22:00 in Los Angeles.
    const early = new Date('2026-06-11T05:00:00Z');
    expect(await sweepOverdueInvoices(h.database, early)).toBe(1);
    expect(await sweepExpiredEstimates(h.database, early)).toBe(1);
    expect(await status(utc, 'invoices', ids.utcInv)).toBe('overdue');
    expect(await status(la, 'invoices', ids.laInv)).toBe('sent');
    expect(await status(utc, 'estimates', ids.utcEst)).toBe('expired');
    expect(await status(la, 'estimates', ids.laEst)).toBe('sent');

    const later = new Date('2026-06-11T08:00:00Z');
    const emitted = await eventsDuring(h, la.organizationId, async () => {
      expect(await sweepOverdueInvoices(h.database, later)).toBe(1);
      expect(await sweepExpiredEstimates(h.database, later)).toBe(1);
    });
    expect(await status(la, 'invoices', ids.laInv)).toBe('overdue');
    expect(await status(la, 'estimates', ids.laEst)).toBe('expired');
    // Overdue emits two events; expiry emits none.
    expect(emitted.map((e) => e.type).sort()).toEqual(['invoice.overdue', 'invoice.status_changed']);
    expect(emitted[0]?.data).toMatchObject({ oldStatus: 'SENT', newStatus: 'OVERDUE', amountDue: 100 });
    // Running again changes nothing.
    expect(await sweepOverdueInvoices(h.database, later)).toBe(0);
    expect(await sweepExpiredEstimates(h.database, later)).toBe(0);
  });
});
