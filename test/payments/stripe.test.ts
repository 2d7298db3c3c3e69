import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations } from '../../src/db/schema/index.js';
import { createCustomer, eventsDuring, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import {
  chargeRefunded,
  deliver,
  footprint,
  paymentIntent,
  STRIPE_SECRET,
  sentInvoice,
  stripeEvent,
  stripeRefund,
} from './helpers.js';

describe('Stripe events in', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  let customerId: string;
  let n = 0;
  const pi = () => `pi_test${Date.now().toString(36)}${++n}`;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    other = await newTenant(h, { name: 'Other Org' });
    customerId = (await createCustomer(h, owner)).id;
    const res = await owner.call('PATCH', '/api/settings', { stripeWebhookSecret: STRIPE_SECRET });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(async () => h?.close());

  const payments = async (query: Record<string, string>) =>
    (await owner.call('GET', '/api/payments', undefined, { query })).json().data;
  const succeeded = (id: string, cents: number, invoiceId: string | undefined, currency = 'usd') =>
    stripeEvent('payment_intent.succeeded', paymentIntent(id, cents, invoiceId, currency));

  it('keeps the signing secret write-only and encrypted', async () => {
    const shown = (await owner.call('GET', '/api/settings')).json().data;
    expect(shown.stripeWebhookConfigured).toBe(true);
    expect(JSON.stringify(shown)).not.toContain('whsec_');
    const [org] = await h.admin.db.select().from(organizations).where(eq(organizations.id, owner.organizationId));
    expect(JSON.stringify(org?.settings)).not.toContain(STRIPE_SECRET);
    expect((await other.call('GET', '/api/settings')).json().data.stripeWebhookConfigured).toBe(false);
    for (const bad of ['sk_live_123', 'whsec_', 42]) {
      expect((await owner.call('PATCH', '/api/settings', { stripeWebhookSecret: bad })).statusCode).toBe(400);
    }
    // Removing it and setting it again.
    await other.call('PATCH', '/api/settings', { stripeWebhookSecret: 'whsec_othersecret0000' });
    expect((await other.call('GET', '/api/settings')).json().data.stripeWebhookConfigured).toBe(true);
    await other.call('PATCH', '/api/settings', { stripeWebhookSecret: null });
    expect((await other.call('GET', '/api/settings')).json().data.stripeWebhookConfigured).toBe(false);
  });

  it('records payment_intent.succeeded as a card payment, once, without any session', async () => {
    const inv = await sentInvoice(owner, customerId, 120.5);
    const intent = pi();
    const event = succeeded(intent, 12050, inv);
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const res = await deliver(h, owner.organizationId, event);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({ received: true, outcome: 'recorded' });
    });
    expect(events.map((e) => e.type).sort()).toEqual(['invoice.paid', 'invoice.status_changed', 'payment.received']);
    const [p] = await payments({ invoiceId: inv });
    expect(p).toMatchObject({
      amount: 120.5,
      method: 'card',
      origin: 'STRIPE',
      processorPaymentId: intent,
      unappliedAmount: 0,
      status: 'succeeded',
    });
    expect((await owner.call('GET', `/api/invoices/${inv}`)).json().data).toMatchObject({ status: 'paid', balance: 0 });

    // The same event again, and the same intent in another event: nothing changes twice.
    const before = await footprint(h, owner.organizationId);
    for (const replay of [event, succeeded(intent, 12050, inv)]) {
      const res = await deliver(h, owner.organizationId, replay);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.outcome).toBe('duplicate');
    }
    expect(await footprint(h, owner.organizationId)).toEqual(before);
  });

  it('keeps money beyond the balance, or on a void invoice, as unapplied (never dropped, balance never negative)', async () => {
    const inv = await sentInvoice(owner, customerId, 100);
    expect((await deliver(h, owner.organizationId, succeeded(pi(), 15000, inv))).statusCode).toBe(200);
    const voided = await sentInvoice(owner, customerId, 40);
    await owner.call('POST', `/api/invoices/${voided}/void`);
    expect((await deliver(h, owner.organizationId, succeeded(pi(), 4000, voided))).statusCode).toBe(200);

    expect((await owner.call('GET', `/api/invoices/${inv}`)).json().data).toMatchObject({
      status: 'paid',
      amountPaid: 100,
      balance: 0,
    });
    expect((await owner.call('GET', `/api/invoices/${voided}`)).json().data).toMatchObject({
      status: 'void',
      amountPaid: 0,
    });
    const unapplied = await payments({ unapplied: 'true' });
    expect(unapplied.map((p: { invoiceId: string; amount: number; unappliedAmount: number }) => p)).toEqual([
      expect.objectContaining({ invoiceId: voided, amount: 40, unappliedAmount: 40 }),
      expect.objectContaining({ invoiceId: inv, amount: 150, unappliedAmount: 50 }),
    ]);

    // Refunding the excess takes it from the unapplied part first: the invoice stays paid.
    const over = unapplied[1].id as string;
    const res = await owner.call('POST', `/api/payments/${over}/refunds`, { amount: 50 });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.payment).toMatchObject({ unappliedAmount: 0, refundedAmount: 50 });
    expect(res.json().data.invoice).toMatchObject({ status: 'paid', amountPaid: 100 });
    expect((await payments({ unapplied: 'true' })).map((p: { id: string }) => p.id)).toEqual([unapplied[0].id]);
  });

  it('records each Stripe refund once, from charge.refunded and refund.created in any order', async () => {
    const inv = await sentInvoice(owner, customerId, 100);
    const intent = pi();
    await deliver(h, owner.organizationId, succeeded(intent, 10000, inv));
    const r1 = stripeRefund(`re_${intent}_1`, intent, 2500);
    const r2 = stripeRefund(`re_${intent}_2`, intent, 1000);
    const r3 = stripeRefund(`re_${intent}_3`, intent, 500);

    // Newer API versions: refund.created first.
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const res = await deliver(h, owner.organizationId, stripeEvent('refund.created', r2));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.outcome).toBe('recorded');
    });
    const refunded = events.find((e) => e.type === 'payment.refunded');
    expect(refunded?.data).toMatchObject({ refundedAmount: 10, origin: 'STRIPE_DASHBOARD' });
    expect(events.map((e) => e.type).sort()).toEqual(['invoice.status_changed', 'payment.refunded']);

    // Then the charge, carrying r1 and r2: only r1 is new.
    const charge = stripeEvent('charge.refunded', chargeRefunded(intent, 10000, [r1, r2]));
    expect((await deliver(h, owner.organizationId, charge)).json().data.outcome).toBe('recorded');
    const before = await footprint(h, owner.organizationId);
    for (const replay of [
      charge,
      stripeEvent('refund.created', r1),
      stripeEvent('charge.refunded', chargeRefunded(intent, 10000, [r1, r2])),
    ]) {
      const res = await deliver(h, owner.organizationId, replay);
      expect(res.statusCode).toBe(200);
      expect(res.json().data.outcome).toBe('duplicate');
    }
    expect(await footprint(h, owner.organizationId)).toEqual(before);
    // An older charge.refunded arriving late changes nothing either; a newer one adds r3.
    expect(
      (
        await deliver(h, owner.organizationId, stripeEvent('charge.refunded', chargeRefunded(intent, 10000, [r1])))
      ).json().data.outcome,
    ).toBe('duplicate');
    await deliver(h, owner.organizationId, stripeEvent('charge.refunded', chargeRefunded(intent, 10000, [r1, r2, r3])));

    const [p] = await payments({ invoiceId: inv });
    const detail = (await owner.call('GET', `/api/payments/${p.id}`)).json().data;
    expect(detail).toMatchObject({ status: 'partially_refunded', refundedAmount: 40 });
    expect(
      detail.refunds.map((r: { processorRefundId: string; origin: string; amount: number }) => [
        r.processorRefundId,
        r.origin,
        r.amount,
      ]),
    ).toEqual([
      [r2.id, 'STRIPE_DASHBOARD', 10],
      [r1.id, 'STRIPE_DASHBOARD', 25],
      [r3.id, 'STRIPE_DASHBOARD', 5],
    ]);
    expect((await owner.call('GET', `/api/invoices/${inv}`)).json().data).toMatchObject({
      status: 'partially_paid',
      amountPaid: 60,
    });
  });

  it('answers 200 and ignores other event types; 409 for a refund whose payment has not arrived', async () => {
    const before = await footprint(h, owner.organizationId);
    const res = await deliver(
      h,
      owner.organizationId,
      stripeEvent('customer.created', { id: 'cus_1', object: 'customer' }),
    );
    expect(res.statusCode).toBe(200);
    expect(res.json().data.outcome).toBe('ignored');
    const early = await deliver(
      h,
      owner.organizationId,
      stripeEvent('refund.created', stripeRefund('re_early', 'pi_unknown', 100)),
    );
    expect(early.statusCode).toBe(409);
    expect(await footprint(h, owner.organizationId)).toEqual(before);
  });

  it('converts minor units exactly, zero- and three-decimal currencies included', async () => {
    const yen = await newTenant(h, { name: 'Yen Co' });
    await setSettings(h, yen.organizationId, { currency: 'JPY' });
    await yen.call('PATCH', '/api/settings', { stripeWebhookSecret: STRIPE_SECRET });
    const c = (await createCustomer(h, yen)).id;
    const inv = await sentInvoice(yen, c, 5000);
    expect((await deliver(h, yen.organizationId, succeeded(pi(), 1234, inv, 'jpy'))).statusCode).toBe(200);
    const paid = (await yen.call('GET', `/api/invoices/${inv}`)).json().data;
    expect(paid).toMatchObject({ amountPaid: 1234, balance: 3766 });

    const dinar = await newTenant(h, { name: 'Dinar Co' });
    await setSettings(h, dinar.organizationId, { currency: 'KWD' });
    await dinar.call('PATCH', '/api/settings', { stripeWebhookSecret: STRIPE_SECRET });
    const d = (await createCustomer(h, dinar)).id;
    const inv2 = await sentInvoice(dinar, d, 10);
    expect((await deliver(h, dinar.organizationId, succeeded(pi(), 1230, inv2, 'kwd'))).statusCode).toBe(200);
    expect((await dinar.call('GET', `/api/invoices/${inv2}`)).json().data.amountPaid).toBe(1.23);
    const before = await footprint(h, dinar.organizationId);
    expect((await deliver(h, dinar.organizationId, succeeded(pi(), 1235, inv2, 'kwd'))).statusCode).toBe(400);
    expect(await footprint(h, dinar.organizationId)).toEqual(before);
  });

  it('refuses bad events with 400, nothing written and no event', async () => {
    const inv = await sentInvoice(owner, customerId, 100);
    const othersInvoice = await sentInvoice(other, (await createCustomer(h, other)).id, 100);
    const good = succeeded(pi(), 1000, inv);
    const raw = JSON.stringify(good);
    const before = await footprint(h, owner.organizationId);
    const cases: Array<[string, () => Promise<LightMyRequestResponse>]> = [
      ['wrong secret', () => deliver(h, owner.organizationId, good, { secret: 'whsec_wrongwrongwrong' })],
      [
        'stale timestamp',
        () => deliver(h, owner.organizationId, good, { timestamp: Math.floor(Date.now() / 1000) - 301 }),
      ],
      ['no signature', () => deliver(h, owner.organizationId, good, { signature: null })],
      ['garbage signature', () => deliver(h, owner.organizationId, good, { signature: 't=1,v1=abc' })],
      ['body changed after signing', () => deliverTampered()],
      ['malformed JSON', () => deliver(h, owner.organizationId, null, { raw: '{"id": "evt_1", "type": ' })],
      ['missing metadata.invoiceId', () => deliver(h, owner.organizationId, succeeded(pi(), 1000, undefined))],
      ['foreign metadata.invoiceId', () => deliver(h, owner.organizationId, succeeded(pi(), 1000, othersInvoice))],
      ['unknown metadata.invoiceId', () => deliver(h, owner.organizationId, succeeded(pi(), 1000, 'inv_nope'))],
      ['other currency', () => deliver(h, owner.organizationId, succeeded(pi(), 1000, inv, 'eur'))],
      [
        'refund in another currency',
        () => deliver(h, owner.organizationId, stripeEvent('refund.created', stripeRefund('re_x', 'pi_x', 100, 'eur'))),
      ],
      ['unknown organization', () => deliver(h, 'org_doesnotexist', good)],
    ];
    async function deliverTampered() {
      const header = (await import('stripe')).default.webhooks.generateTestHeaderString({
        payload: raw,
        secret: STRIPE_SECRET,
      });
      return h.app.inject({
        method: 'POST',
        url: `/api/payments/stripe/${owner.organizationId}`,
        headers: { 'content-type': 'application/json', 'stripe-signature': header },
        payload: raw.replace('1000', '9000'),
      });
    }
    for (const [name, send] of cases) {
      const res = await send();
      expect(res.statusCode, name).toBe(400);
      expect(res.json().error.code, name).toBe('VALIDATION_FAILED');
    }
    // An organization with no secret configured refuses everything.
    const otherBefore = await footprint(h, other.organizationId);
    expect((await deliver(h, other.organizationId, succeeded(pi(), 1000, othersInvoice))).statusCode).toBe(400);
    expect(await footprint(h, other.organizationId)).toEqual(otherBefore);
    expect(await footprint(h, owner.organizationId)).toEqual(before);
    // Non-JSON content types are refused before anything else.
    const text = await h.app.inject({
      method: 'POST',
      url: `/api/payments/stripe/${owner.organizationId}`,
      headers: { 'content-type': 'text/plain' },
      payload: raw,
    });
    expect(text.statusCode).toBe(415);
  });
});
