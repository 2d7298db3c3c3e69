import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepOverdueInvoices } from '../../src/modules/invoices/invoices.tasks.js';
import { createCustomer, eventsDuring } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { footprint, pay, sentInvoice } from './helpers.js';

describe('POST /api/payments/{id}/refunds', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  const refund = (paymentId: string, body: unknown = {}, who: TestUser = owner) =>
    who.call('POST', `/api/payments/${paymentId}/refunds`, body);
  const invoice = async (id: string) => (await owner.call('GET', `/api/invoices/${id}`)).json().data;

  it('refunds part of a payment: paid → partially_paid, payment.refunded and invoice.status_changed in one go', async () => {
    const inv = await sentInvoice(owner, customerId, 100);
    const paymentId = await pay(owner, inv, 100, 'card');
    // biome-ignore lint/suspicious/noExplicitAny: a JSON response body read field by field
    let body: Record<string, any> = {};
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const res = await refund(paymentId, { amount: 30.25, reason: 'Hedge not trimmed' });
      expect(res.statusCode, res.body).toBe(201);
      body = res.json().data;
    });
    expect(body.refund).toEqual({
      id: expect.stringMatching(/^rfd_/),
      paymentId,
      amount: 30.25,
      reason: 'Hedge not trimmed',
      origin: 'API',
      processorRefundId: null,
      createdAt: expect.any(String),
    });
    expect(body.payment).toMatchObject({ id: paymentId, status: 'partially_refunded', refundedAmount: 30.25 });
    expect(body.payment.refunds).toEqual([body.refund]);
    expect(body.invoice).toMatchObject({ id: inv, status: 'partially_paid', amountPaid: 69.75, balance: 30.25 });
    expect(events.map((e) => e.type).sort()).toEqual(['invoice.status_changed', 'payment.refunded']);
    const refunded = events.find((e) => e.type === 'payment.refunded');
    expect(refunded?.data).toMatchObject({
      paymentId,
      invoiceId: inv,
      refundId: body.refund.id,
      refundedAmount: 30.25,
      origin: 'API',
      payment: { id: paymentId, status: 'partially_refunded', refundedAmount: 30.25 },
    });
    const changed = events.find((e) => e.type === 'invoice.status_changed');
    expect(changed?.data).toMatchObject({ invoiceId: inv, oldStatus: 'PAID', newStatus: 'PARTIALLY_PAID' });
    expect((await owner.call('GET', `/api/payments/${paymentId}`)).json().data.refunds).toHaveLength(1);
  });

  it('defaults to the whole refundable rest; nothing stays paid → sent (or overdue once past due)', async () => {
    const inv = await sentInvoice(owner, customerId, 80);
    const p1 = await pay(owner, inv, 50);
    const p2 = await pay(owner, inv, 30);
    await refund(p1, { amount: 20 });
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const res = await refund(p1);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.refund.amount).toBe(30);
      expect(res.json().data.payment).toMatchObject({ status: 'refunded', refundedAmount: 50 });
      expect(res.json().data.invoice).toMatchObject({ status: 'partially_paid', amountPaid: 30, balance: 50 });
    });
    // partially_paid → partially_paid: no status event.
    expect(events.map((e) => e.type)).toEqual(['payment.refunded']);
    const res = await refund(p2);
    expect(res.json().data.invoice).toMatchObject({ status: 'sent', amountPaid: 0, balance: 80 });

    const late = await sentInvoice(owner, customerId, 10, '2026-01-15');
    const p3 = await pay(owner, late, 10);
    const back = await refund(p3, { amount: 4 });
    expect(back.json().data.invoice).toMatchObject({ status: 'overdue', amountPaid: 6 });
  });

  it('follows the transition table from every status that holds money', async () => {
    const cases: Array<{ setup: (id: string) => Promise<void>; amount: number; from: string; to: string }> = [
      { setup: async () => {}, amount: 10, from: 'paid', to: 'partially_paid' },
      { setup: async () => {}, amount: 100, from: 'paid', to: 'sent' },
      {
        setup: async (id) => {
          await owner.call('POST', `/api/invoices/${id}/void`);
        },
        amount: 100,
        from: 'void',
        to: 'void',
      },
    ];
    for (const c of cases) {
      const inv = await sentInvoice(owner, customerId, 100);
      const p = await pay(owner, inv, 100);
      await c.setup(inv);
      expect((await invoice(inv)).status).toBe(c.from);
      const res = await refund(p, { amount: c.amount });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.invoice.status).toBe(c.to);
      expect(res.json().data.invoice.amountPaid).toBe(100 - c.amount);
    }
    // Written off after a partial payment: the refund lowers amountPaid, the status stays.
    const wo = await sentInvoice(owner, customerId, 100);
    const p = await pay(owner, wo, 40);
    expect((await owner.call('POST', `/api/invoices/${wo}/write-off`)).statusCode).toBe(200);
    const res = await refund(p);
    expect(res.json().data.invoice).toMatchObject({ status: 'written_off', amountPaid: 0, balance: 0 });
    // Overdue stays overdue, partially refunded or fully.
    const od = await sentInvoice(owner, customerId, 100, '2026-01-15');
    const q = await pay(owner, od, 60);
    await sweepOverdueInvoices(h.database, new Date('2026-12-31T12:00:00Z'));
    expect((await invoice(od)).status).toBe('overdue');
    expect((await refund(q, { amount: 10 })).json().data.invoice.status).toBe('overdue');
    expect((await refund(q)).json().data.invoice).toMatchObject({ status: 'overdue', amountPaid: 0 });
  });

  it('refuses bad refunds with nothing written and no event', async () => {
    const inv = await sentInvoice(owner, customerId, 50);
    const p = await pay(owner, inv, 50);
    const member = await addMember(h, owner, 'member');
    const other = await newTenant(h, { name: 'Elsewhere' });
    const before = await footprint(h, owner.organizationId);
    const refusals: Array<[unknown, TestUser, number, string]> = [
      [{ amount: 0 }, owner, 400, 'VALIDATION_FAILED'],
      [{ amount: -5 }, owner, 400, 'VALIDATION_FAILED'],
      [{ amount: 50.01 }, owner, 400, 'VALIDATION_FAILED'],
      [{ amount: 1.005 }, owner, 400, 'VALIDATION_FAILED'],
      [{ amount: 'ten' }, owner, 400, 'VALIDATION_FAILED'],
      [{ amount: 5, paymentId: 'x' }, owner, 400, 'VALIDATION_FAILED'],
      [{ amount: 5 }, member, 403, 'FORBIDDEN'],
      [{ amount: 5 }, other, 404, 'NOT_FOUND'],
    ];
    for (const [body, who, status, code] of refusals) {
      const res = await refund(p, body, who);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json().error.code).toBe(code);
    }
    expect((await refund('pay_doesnotexist', { amount: 1 })).statusCode).toBe(404);
    expect(await footprint(h, owner.organizationId)).toEqual(before);

    // Fully refunded: nothing is left, the default is refused too.
    expect((await refund(p)).statusCode).toBe(201);
    const after = await footprint(h, owner.organizationId);
    for (const body of [{}, { amount: 0.01 }]) {
      const res = await refund(p, body);
      expect(res.statusCode).toBe(400);
    }
    expect(await footprint(h, owner.organizationId)).toEqual(after);
  });

  it('20 concurrent refunds never give back more than the payment', async () => {
    const inv = await sentInvoice(owner, customerId, 10);
    const p = await pay(owner, inv, 10);
    const results = await Promise.all(Array.from({ length: 20 }, () => refund(p, { amount: 1 })));
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 201)).toHaveLength(10);
    expect(codes.filter((c) => c !== 201).every((c) => c === 400)).toBe(true);
    const detail = (await owner.call('GET', `/api/payments/${p}`)).json().data;
    expect(detail).toMatchObject({ status: 'refunded', refundedAmount: 10 });
    expect(detail.refunds).toHaveLength(10);
    expect(await invoice(inv)).toMatchObject({ status: 'sent', amountPaid: 0, balance: 10 });
    // Default-amount refunds racing: exactly one takes the whole rest.
    const inv2 = await sentInvoice(owner, customerId, 10);
    const p2 = await pay(owner, inv2, 10);
    const all = await Promise.all(Array.from({ length: 20 }, () => refund(p2)));
    expect(all.filter((r) => r.statusCode === 201)).toHaveLength(1);
    expect((await invoice(inv2)).amountPaid).toBe(0);
  });
});
