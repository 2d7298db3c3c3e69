import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { today } from '../../src/platform/dates.js';
import {
  createCustomer,
  createProperty,
  createService,
  eventsDuring,
  eventsOf,
  line,
  setSettings,
} from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

describe('invoices', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    other = await newTenant(h, { name: 'Other Co' });
    customerId = (await createCustomer(h, owner)).id;
    await setSettings(h, owner.organizationId, { taxRate: 8.25, paymentTermsDays: 14 });
  });
  afterAll(async () => h?.close());

  const create = (body: Record<string, unknown>) => owner.call('POST', '/api/invoices', body);

  it('creates a draft with numbered, taxed, cent-exact totals and emits invoice.created', async () => {
    const svc = await createService(h, owner, { name: 'Aeration', unitPriceCents: 12_345, taxable: false });
    const prop = await createProperty(h, owner, customerId);
    const emitted = await eventsDuring(h, owner.organizationId, async () => {
      const res = await create({
        customerId,
        propertyId: prop.id,
        notes: 'Gate code 1234',
        lineItems: [
          { description: 'Mowing', quantity: 1.5, unitPrice: 33.33 },
          { serviceId: svc.id, quantity: 2 },
          { description: 'Mulch', quantity: 3, unitPrice: 0.05, taxable: false },
        ],
      });
      expect(res.statusCode, res.body).toBe(201);
      const inv = res.json().data;
      // 1.5 × 33.33 = 49.995 → 50.00 (half away from zero); 2 × 123.45 = 246.90; 3 × 0.05 = 0.15
      expect(inv.lineItems.map((l: { amount: number }) => l.amount)).toEqual([50, 246.9, 0.15]);
      expect(inv.lineItems[1]).toMatchObject({ description: 'Aeration', unitPrice: 123.45, taxable: false });
      expect(inv).toMatchObject({
        status: 'draft',
        subtotal: 297.05,
        taxRate: 8.25,
        tax: 4.13, // 50.00 × 8.25% = 4.125 → 4.13
        total: 301.18,
        amountPaid: 0,
        balance: 301.18,
        propertyId: prop.id,
        notes: 'Gate code 1234',
        payments: [],
      });
      expect(inv.invoiceNumber).toMatch(/^INV-\d{6}$/);
      const todayDate = today('UTC');
      expect(inv.invoiceDate).toBe(todayDate);
      const due = new Date(`${todayDate}T00:00:00Z`);
      due.setUTCDate(due.getUTCDate() + 14);
      expect(inv.dueDate).toBe(due.toISOString().slice(0, 10));
    });
    expect(emitted.map((e) => e.type)).toEqual(['invoice.created']);
    const data = emitted[0]?.data as Record<string, unknown>;
    expect(data).toMatchObject({ invoiceNumber: expect.stringMatching(/^INV-/), amountDue: 301.18 });
    expect((data.invoice as { id: string }).id).toBe(data.invoiceId);
  });

  it('does not tax a tax-exempt customer', async () => {
    const exempt = await createCustomer(h, owner, { taxExempt: true });
    const res = await create({ customerId: exempt.id, lineItems: [line('A', 1, 100)] });
    expect(res.json().data).toMatchObject({ subtotal: 100, tax: 0, total: 100, taxRate: 0 });
  });

  it('numbers each organization separately', async () => {
    const c = await createCustomer(h, other);
    const res = await other.call('POST', '/api/invoices', { customerId: c.id, lineItems: [line()] });
    expect(res.json().data.invoiceNumber).toBe('INV-000001');
  });

  it('refuses bad input with a clear 400, writing nothing and emitting nothing', async () => {
    const foreignCustomer = await createCustomer(h, other);
    const foreignService = await createService(h, other);
    const otherCustomer = await createCustomer(h, owner);
    const otherProperty = await createProperty(h, owner, otherCustomer.id);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['no lines', { customerId }, 'lineItems'],
      ['empty lines', { customerId, lineItems: [] }, 'lineItems'],
      ['zero quantity', { customerId, lineItems: [line('x', 0, 1)] }, 'lineItems.0.quantity'],
      ['negative quantity', { customerId, lineItems: [line('x', -1, 1)] }, 'lineItems.0.quantity'],
      ['4 decimal quantity', { customerId, lineItems: [line('x', 1.0001, 1)] }, 'lineItems.0.quantity'],
      ['negative price', { customerId, lineItems: [line('x', 1, -1)] }, 'lineItems.0.unitPrice'],
      ['3 decimal price', { customerId, lineItems: [line('x', 1, 1.005)] }, 'lineItems.0.unitPrice'],
      ['no description', { customerId, lineItems: [{ quantity: 1, unitPrice: 1 }] }, 'lineItems.0.description'],
      ['no price', { customerId, lineItems: [{ description: 'x', quantity: 1 }] }, 'lineItems.0.unitPrice'],
      [
        'string quantity',
        { customerId, lineItems: [{ description: 'x', quantity: '1', unitPrice: 1 }] },
        'lineItems.0.quantity',
      ],
      ['unknown field', { customerId, lineItems: [line()], total: 5 }, 'total'],
      ['missing customer', { lineItems: [line()] }, 'customerId'],
      ['unknown customer', { customerId: 'cus_nope', lineItems: [line()] }, 'customerId'],
      ["another org's customer", { customerId: foreignCustomer.id, lineItems: [line()] }, 'customerId'],
      ['unknown property', { customerId, propertyId: 'prp_nope', lineItems: [line()] }, 'propertyId'],
      ["another customer's property", { customerId, propertyId: otherProperty.id, lineItems: [line()] }, 'propertyId'],
      ['unknown service', { customerId, lineItems: [{ serviceId: 'svc_nope', quantity: 1 }] }, 'lineItems.serviceId'],
      [
        "another org's service",
        { customerId, lineItems: [{ serviceId: foreignService.id, quantity: 1 }] },
        'lineItems.serviceId',
      ],
      ['bad invoice date', { customerId, lineItems: [line()], invoiceDate: '2026-02-30' }, 'invoiceDate'],
      [
        'date-time invoice date',
        { customerId, lineItems: [line()], invoiceDate: '2026-02-01T00:00:00Z' },
        'invoiceDate',
      ],
      [
        'due before invoice',
        { customerId, lineItems: [line()], invoiceDate: '2026-03-10', dueDate: '2026-03-09' },
        'dueDate',
      ],
      ['huge total', { customerId, lineItems: [line('x', 1_000_000, 1_000_000_000)] }, 'lineItems'],
    ];
    const before = await eventsOf(h, owner.organizationId);
    const listBefore = await owner.call('GET', '/api/invoices?includeTotal=true');
    for (const [name, body, field] of cases) {
      const res = await create(body);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(400);
      expect(res.json().error.code, name).toBe('VALIDATION_FAILED');
      expect(res.json().error.details?.[0]?.field, name).toBe(field);
    }
    expect(await eventsOf(h, owner.organizationId)).toEqual(before);
    const listAfter = await owner.call('GET', '/api/invoices?includeTotal=true');
    expect(listAfter.headers['x-total-count']).toBe(listBefore.headers['x-total-count']);
    // The failed attempts used no numbers: the next invoice continues the sequence.
    const last = Number(String(listBefore.json().data[0].invoiceNumber).slice(4));
    const next = await create({ customerId, lineItems: [line()] });
    expect(next.json().data.invoiceNumber).toBe(`INV-${String(last + 1).padStart(6, '0')}`);
  });

  it('edits a draft fully, re-totals, and limits edits after sending to dueDate and notes', async () => {
    const inv = (await create({ customerId, lineItems: [line('A', 1, 10)] })).json().data;
    const edited = await owner.call('PUT', `/api/invoices/${inv.id}`, {
      lineItems: [line('B', 2, 20)],
      notes: 'n',
      invoiceDate: '2026-01-05',
      dueDate: '2026-02-05',
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json().data).toMatchObject({
      subtotal: 40,
      tax: 3.3,
      total: 43.3,
      notes: 'n',
      invoiceDate: '2026-01-05',
    });
    expect(edited.json().data.lineItems).toHaveLength(1);

    const exempt = await createCustomer(h, owner, { taxExempt: true });
    const moved = await owner.call('PUT', `/api/invoices/${inv.id}`, { customerId: exempt.id });
    expect(moved.json().data).toMatchObject({ customerId: exempt.id, tax: 0, total: 40 });

    const beforeBad = await eventsOf(h, owner.organizationId);
    for (const body of [
      { dueDate: '2026-01-01' },
      { customerId: 'cus_missing' },
      { propertyId: 'prp_missing' },
      { lineItems: [line('x', -1, 1)] },
      { lineItems: [] },
      { invoiceDate: '2026-02-29' },
    ]) {
      const res = await owner.call('PUT', `/api/invoices/${inv.id}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    expect(await eventsOf(h, owner.organizationId)).toEqual(beforeBad);
    expect((await owner.call('GET', `/api/invoices/${inv.id}`)).json().data).toMatchObject({
      total: 40,
      customerId: exempt.id,
    });

    expect((await owner.call('POST', `/api/invoices/${inv.id}/send`)).statusCode).toBe(200);
    const limited = await owner.call('PUT', `/api/invoices/${inv.id}`, { dueDate: '2026-03-01', notes: null });
    expect(limited.statusCode, limited.body).toBe(200);
    expect(limited.json().data).toMatchObject({ dueDate: '2026-03-01', notes: null, status: 'sent' });
    for (const body of [{ lineItems: [line()] }, { customerId }, { invoiceDate: '2026-01-06' }, { propertyId: null }]) {
      const res = await owner.call('PUT', `/api/invoices/${inv.id}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(409);
      expect(res.json().error.code).toBe('INVALID_STATE');
    }
    const unknown = await owner.call('PUT', `/api/invoices/${inv.id}`, { status: 'paid' });
    expect(unknown.statusCode).toBe(400);
  });

  it('deletes drafts only', async () => {
    const a = (await create({ customerId, lineItems: [line()] })).json().data;
    expect((await owner.call('DELETE', `/api/invoices/${a.id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/invoices/${a.id}`)).statusCode).toBe(404);
    const b = (await create({ customerId, lineItems: [line()] })).json().data;
    await owner.call('POST', `/api/invoices/${b.id}/send`);
    const refused = await owner.call('DELETE', `/api/invoices/${b.id}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('INVALID_STATE');
  });

  it('records payments: partial then full, with events, and refuses bad payments without writing', async () => {
    const inv = (await create({ customerId, lineItems: [line('A', 1, 100)] })).json().data; // total 108.25
    await owner.call('POST', `/api/invoices/${inv.id}/send`);

    const partial = await eventsDuring(h, owner.organizationId, async () => {
      const res = await owner.call('POST', `/api/invoices/${inv.id}/payments`, {
        amount: 8.25,
        paymentDate: '2026-01-10',
        method: 'check',
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toMatchObject({ status: 'partially_paid', amountPaid: 8.25, balance: 100 });
      expect(res.json().data.payments).toMatchObject([{ amount: 8.25, paymentDate: '2026-01-10', method: 'check' }]);
    });
    expect(partial.map((e) => e.type).sort()).toEqual(['invoice.status_changed', 'payment.received']);
    expect(partial.find((e) => e.type === 'invoice.status_changed')?.data).toMatchObject({
      oldStatus: 'SENT',
      newStatus: 'PARTIALLY_PAID',
      amountDue: 100,
    });
    expect(partial.find((e) => e.type === 'payment.received')?.data).toMatchObject({
      invoiceId: inv.id,
      amount: 8.25,
      amountDue: 100,
    });

    const bad: Array<[Record<string, unknown>, number]> = [
      [{ amount: 100.01, method: 'cash' }, 400],
      [{ amount: 0, method: 'cash' }, 400],
      [{ amount: -5, method: 'cash' }, 400],
      [{ amount: 1.001, method: 'cash' }, 400],
      [{ amount: 1, method: 'bitcoin' }, 400],
      [{ amount: 1 }, 400],
      [{ amount: 1, method: 'cash', paymentDate: '2999-01-01' }, 400],
      [{ amount: 1, method: 'cash', paymentDate: 'yesterday' }, 400],
    ];
    const before = await eventsOf(h, owner.organizationId);
    for (const [body, status] of bad) {
      const res = await owner.call('POST', `/api/invoices/${inv.id}/payments`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
    }
    expect(await eventsOf(h, owner.organizationId)).toEqual(before);
    expect((await owner.call('GET', `/api/invoices/${inv.id}`)).json().data.payments).toHaveLength(1);

    const full = await eventsDuring(h, owner.organizationId, async () => {
      const res = await owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 100, method: 'card' });
      expect(res.json().data).toMatchObject({ status: 'paid', amountPaid: 108.25, balance: 0 });
      expect(res.json().data.payments[1].paymentDate).toBe(today('UTC'));
    });
    expect(full.map((e) => e.type).sort()).toEqual(['invoice.paid', 'invoice.status_changed', 'payment.received']);
    expect(full.find((e) => e.type === 'invoice.paid')?.data).toMatchObject({
      oldStatus: 'PARTIALLY_PAID',
      newStatus: 'PAID',
      amountDue: 0,
    });

    const after = await owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 1, method: 'cash' });
    expect(after.statusCode).toBe(409);
    expect(after.json().error.code).toBe('INVALID_STATE');
  });

  it('refuses payments on void and written-off invoices', async () => {
    for (const action of ['void', 'write-off']) {
      const inv = (await create({ customerId, lineItems: [line()] })).json().data;
      await owner.call('POST', `/api/invoices/${inv.id}/send`);
      expect((await owner.call('POST', `/api/invoices/${inv.id}/${action}`)).statusCode).toBe(200);
      const res = await owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 1, method: 'cash' });
      expect(res.statusCode, action).toBe(409);
      const got = (await owner.call('GET', `/api/invoices/${inv.id}`)).json().data;
      expect(got.balance).toBe(0);
      expect(got.payments).toEqual([]);
    }
  });

  it('answers 404 for a missing or foreign invoice', async () => {
    const inv = (await create({ customerId, lineItems: [line()] })).json().data;
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PUT', '', { notes: 'x' }],
      ['POST', '/payments', { amount: 1, method: 'cash' }],
      ['POST', '/send', undefined],
      ['POST', '/void', undefined],
      ['DELETE', '', undefined],
    ] as const) {
      expect((await other.call(method, `/api/invoices/${inv.id}${suffix}`, body)).statusCode).toBe(404);
      expect((await owner.call(method, `/api/invoices/inv_missing${suffix}`, body)).statusCode).toBe(404);
    }
  });

  it('lists newest first with filters and pagination headers', async () => {
    const c = await createCustomer(h, owner);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await create({ customerId: c.id, lineItems: [line()] })).json().data.id);
    const res = await owner.call('GET', `/api/invoices?customerId=${c.id}&limit=2&includeTotal=true`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-total-count']).toBe('3');
    expect(res.headers.link).toContain('rel="next"');
    expect(res.json().data.map((i: { id: string }) => i.id)).toEqual([ids[2], ids[1]]);
    await owner.call('POST', `/api/invoices/${ids[0]}/send`);
    const sent = await owner.call('GET', `/api/invoices?customerId=${c.id}&status=sent`);
    expect(sent.json().data.map((i: { id: string }) => i.id)).toEqual([ids[0]]);
    expect((await owner.call('GET', '/api/invoices?status=bogus')).statusCode).toBe(400);
    expect((await owner.call('GET', '/api/invoices?limit=101')).statusCode).toBe(400);
    expect((await owner.call('GET', '/api/invoices?startDate=03/01/2026')).statusCode).toBe(400);
  });
});
