import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { pay, sentInvoice } from './helpers.js';
import { type StripeStandIn, startStripeStandIn } from './stripe-stand-in.js';

/**
 * Issue 19, "Done when", tried as a new user would: configure Stripe keys, create an
 * intent for a sent invoice, send the signed payment_intent.succeeded made with the
 * stripe package, see the invoice paid and the intent succeeded; record a check,
 * deposit it with another, and read a reconciliation report that shows what is still
 * undeposited.
 */
describe('issue 19: done when', () => {
  let h: Harness;
  let stripe: StripeStandIn;
  let owner: TestUser;

  beforeAll(async () => {
    stripe = await startStripeStandIn();
    h = await createHarness(stripe.env);
    owner = await newTenant(h);
  });
  afterAll(async () => {
    await h?.close();
    await stripe?.close();
  });

  it('walks from Stripe keys to a card payment, a deposit and the reconciliation report', async () => {
    const webhookSecret = 'whsec_doneWhen0123456789abcdefgh';
    const configured = await owner.call('PATCH', '/api/settings', {
      stripeSecretKey: 'sk_test_doneWhen0123456789abcdef',
      stripeWebhookSecret: webhookSecret,
    });
    expect(configured.statusCode, configured.body).toBe(200);
    expect(configured.json().data).toMatchObject({ stripeSecretKeyConfigured: true, stripeWebhookConfigured: true });

    const customer = await createCustomer(h, owner);
    const invoiceId = await sentInvoice(owner, customer.id, 250);
    const created = await owner.call('POST', '/api/payments/intents', { invoiceId });
    expect(created.statusCode, created.body).toBe(201);
    const intent = created.json().data;
    expect(intent).toMatchObject({ amount: 250, status: 'requires_payment_method' });
    const atStripe = stripe.intents.get(intent.processorIntentId);
    expect(atStripe).toMatchObject({ amount: 25000, currency: 'usd', metadata: { invoiceId, intentId: intent.id } });

    // What Stripe sends once the customer paid, signed with the stripe package.
    const payload = JSON.stringify({
      id: 'evt_doneWhen1',
      object: 'event',
      api_version: '2024-06-20',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      type: 'payment_intent.succeeded',
      data: { object: { ...atStripe, status: 'succeeded', amount_received: 25000 } },
    });
    const delivered = await h.app.inject({
      method: 'POST',
      url: `/api/payments/stripe/${owner.organizationId}`,
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret }),
      },
      payload,
    });
    expect(delivered.statusCode, delivered.body).toBe(200);
    expect((await owner.call('GET', `/api/invoices/${invoiceId}`)).json().data).toMatchObject({
      status: 'paid',
      balance: 0,
    });
    expect((await owner.call('GET', `/api/payments/intents/${intent.id}`)).json().data.status).toBe('succeeded');

    // A check and a cash payment go to the bank together; another check stays in the drawer.
    const check = await pay(owner, await sentInvoice(owner, customer.id, 120), 120, 'check', '5001');
    const cash = await pay(owner, await sentInvoice(owner, customer.id, 30), 30, 'cash');
    const drawer = await pay(owner, await sentInvoice(owner, customer.id, 75), 75, 'check', '5002');
    const { timezone } = (await owner.call('GET', '/api/settings')).json().data;
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: timezone }).format(new Date());
    const deposit = await owner.call('POST', '/api/payments/deposits', {
      depositDate: today,
      reference: 'Friday check run',
      paymentIds: [check, cash],
    });
    expect(deposit.statusCode, deposit.body).toBe(201);
    expect(deposit.json().data).toMatchObject({ amount: 150, paymentsTotal: 150, difference: 0 });

    const report = (await owner.call('GET', '/api/payments/reconciliation')).json().data;
    const waiting = report.undepositedPayments.map((p: { id: string; method: string }) => [p.method, p.id]);
    // The check still in the drawer, and the card payment until Stripe's payout arrives.
    expect(waiting).toEqual(expect.arrayContaining([['check', drawer]]));
    expect(waiting.map((w: string[]) => w[0]).sort()).toEqual(['card', 'check']);
    expect(report.undepositedTotal).toBe(325);
    expect(report.deposits.map((d: { id: string }) => d.id)).toEqual([deposit.json().data.id]);
    expect(report.unmatchedPayouts).toEqual([]);
  });
});
