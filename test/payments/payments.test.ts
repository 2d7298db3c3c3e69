import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, eventsDuring } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { pay, sentInvoice } from './helpers.js';

describe('GET /api/payments', () => {
  let h: Harness;
  let owner: TestUser;
  let alice: string;
  let bob: string;
  let invA: string;
  let invB: string;
  let cashId: string;
  let cardId: string;
  let checkId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    alice = (await createCustomer(h, owner)).id;
    bob = (await createCustomer(h, owner, { firstName: 'Bob' })).id;
    invA = await sentInvoice(owner, alice, 100);
    invB = await sentInvoice(owner, bob, 50);
    cashId = await pay(owner, invA, 10, 'cash');
    cardId = await pay(owner, invA, 20.5, 'card');
    checkId = await pay(owner, invB, 50, 'check', 'CHK-1001');
  });
  afterAll(async () => h?.close());

  it('lists every payment newest first in the payment shape', async () => {
    const res = await owner.call('GET', '/api/payments');
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data.map((p: { id: string }) => p.id)).toEqual([checkId, cardId, cashId]);
    expect(data[0]).toEqual({
      id: checkId,
      amount: 50,
      paymentDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      method: 'check',
      createdAt: expect.any(String),
      invoiceId: invB,
      invoiceNumber: expect.stringMatching(/^INV-/),
      customerId: bob,
      reference: 'CHK-1001',
      status: 'succeeded',
      refundedAmount: 0,
      unappliedAmount: 0,
      origin: 'API',
      processorPaymentId: null,
    });
  });

  it('shows one payment with its refunds', async () => {
    const res = await owner.call('GET', `/api/payments/${cardId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      id: cardId,
      amount: 20.5,
      invoiceId: invA,
      customerId: alice,
      refunds: [],
    });
    expect((await owner.call('GET', '/api/payments/pay_missing')).statusCode).toBe(404);
  });

  it('filters by customer, invoice, method, status, dates and unapplied', async () => {
    const ids = async (query: Record<string, string>) => {
      const res = await owner.call('GET', '/api/payments', undefined, { query });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data.map((p: { id: string }) => p.id);
    };
    expect(await ids({ customerId: alice })).toEqual([cardId, cashId]);
    expect(await ids({ customerId: bob })).toEqual([checkId]);
    expect(await ids({ invoiceId: invA })).toEqual([cardId, cashId]);
    expect(await ids({ method: 'card' })).toEqual([cardId]);
    expect(await ids({ status: 'succeeded' })).toEqual([checkId, cardId, cashId]);
    expect(await ids({ status: 'refunded' })).toEqual([]);
    expect(await ids({ unapplied: 'true' })).toEqual([]);
    expect(await ids({ unapplied: 'false' })).toHaveLength(3);
    expect(await ids({ from: '2000-01-01', to: '2999-12-31' })).toHaveLength(3);
    expect(await ids({ to: '2000-01-01' })).toEqual([]);
    const bads: Record<string, string>[] = [
      { status: 'pending' },
      { method: 'gold' },
      { from: 'yesterday' },
      { unapplied: 'yes' },
    ];
    for (const bad of bads) {
      expect((await owner.call('GET', '/api/payments', undefined, { query: bad })).statusCode).toBe(400);
    }
  });

  it('pages with keyset cursors, Link next only when more, X-Total-Count only when asked', async () => {
    const first = await owner.call('GET', '/api/payments', undefined, { query: { limit: '2', includeTotal: 'true' } });
    expect(first.headers['x-total-count']).toBe('3');
    expect(first.headers.link).toContain('rel="next"');
    const second = await owner.call('GET', '/api/payments', undefined, {
      query: { limit: '2', startingAfter: first.json().data[1].id },
    });
    expect(second.json().data.map((p: { id: string }) => p.id)).toEqual([cashId]);
    expect(second.headers.link).not.toContain('rel="next"');
    expect(second.headers['x-total-count']).toBeUndefined();
    const bad = await owner.call('GET', '/api/payments', undefined, { query: { startingAfter: invA } });
    expect(bad.statusCode).toBe(400);
  });

  it('keeps POST /api/invoices/{id}/payments recording into the same payments, emitting payment.received', async () => {
    const inv = await sentInvoice(owner, alice, 30);
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const res = await owner.call('POST', `/api/invoices/${inv}/payments`, {
        amount: 30,
        method: 'ach',
        reference: 'wire 7',
      });
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ status: 'paid', balance: 0, amountPaid: 30 });
      expect(res.json().data.payments).toHaveLength(1);
    });
    const received = events.find((e) => e.type === 'payment.received');
    expect(received?.data).toMatchObject({
      invoiceId: inv,
      amount: 30,
      payment: { invoiceId: inv, reference: 'wire 7', origin: 'API', status: 'succeeded', method: 'ach' },
    });
    const listed = (await owner.call('GET', '/api/payments', undefined, { query: { invoiceId: inv } })).json().data;
    expect(listed).toHaveLength(1);
    expect(listed[0].id).toBe(received?.data.paymentId);
  });

  it("hides another organization's payments", async () => {
    const other = await newTenant(h, { name: 'Other' });
    expect((await other.call('GET', '/api/payments')).json().data).toEqual([]);
    expect((await other.call('GET', `/api/payments/${cashId}`)).statusCode).toBe(404);
    expect((await other.call('GET', '/api/payments', undefined, { query: { customerId: alice } })).json().data).toEqual(
      [],
    );
  });
});
