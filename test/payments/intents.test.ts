import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organizations, paymentIntents } from '../../src/db/schema/index.js';
import { createCustomer, eventsDuring, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { deliver, footprint, STRIPE_SECRET, sentInvoice, stripeEvent } from './helpers.js';
import { type StripeStandIn, startStripeStandIn } from './stripe-stand-in.js';

const KEY = 'sk_test_intents0123456789abcdef';

describe('payment intents (Stripe SDK against a local stand-in)', () => {
  let h: Harness;
  let stripe: StripeStandIn;
  let owner: TestUser;
  let other: TestUser;
  let customerId: string;

  beforeAll(async () => {
    stripe = await startStripeStandIn();
    h = await createHarness(stripe.env);
    owner = await newTenant(h);
    other = await newTenant(h, { name: 'Other Org' });
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => {
    await h?.close();
    await stripe?.close();
  });

  const intentRows = async (organizationId: string) =>
    Number(
      (
        await h.admin.db
          .select({ n: count() })
          .from(paymentIntents)
          .where(eq(paymentIntents.organizationId, organizationId))
      )[0]?.n,
    );
  const create = (body: Record<string, unknown>, user = owner) => user.call('POST', '/api/payments/intents', body);
  const intentEvent = (
    type: string,
    intent: { processorIntentId: string; id: string; invoiceId: string },
    extra = {},
  ) =>
    stripeEvent(type, {
      id: intent.processorIntentId,
      object: 'payment_intent',
      amount: 0,
      amount_received: 0,
      currency: 'usd',
      status: type.replace('payment_intent.', ''),
      metadata: { invoiceId: intent.invoiceId, intentId: intent.id },
      ...extra,
    });

  it('answers 409 saying how to configure Stripe when no key is set, calling nothing', async () => {
    const inv = await sentInvoice(owner, customerId, 50);
    const before = stripe.requests.length;
    const res = await create({ invoiceId: inv });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().error.code).toBe('INVALID_STATE');
    expect(res.json().error.message).toContain('PATCH /api/settings');
    expect(res.json().error.message).toContain('stripeSecretKey');
    expect(stripe.requests.length).toBe(before);
    expect(await intentRows(owner.organizationId)).toBe(0);
  });

  it('keeps the secret key write-only and encrypted', async () => {
    for (const bad of ['pk_test_123456789', 'sk_test_', 'whsec_abcdefghijkl', 42]) {
      expect((await owner.call('PATCH', '/api/settings', { stripeSecretKey: bad })).statusCode).toBe(400);
    }
    const res = await owner.call('PATCH', '/api/settings', {
      stripeSecretKey: KEY,
      stripeWebhookSecret: STRIPE_SECRET,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.stripeSecretKeyConfigured).toBe(true);
    const shown = (await owner.call('GET', '/api/settings')).json().data;
    expect(shown.stripeSecretKeyConfigured).toBe(true);
    expect(JSON.stringify(shown)).not.toContain('sk_test');
    const [org] = await h.admin.db.select().from(organizations).where(eq(organizations.id, owner.organizationId));
    expect(JSON.stringify(org?.settings)).not.toContain(KEY);
    expect((await other.call('GET', '/api/settings')).json().data.stripeSecretKeyConfigured).toBe(false);
  });

  it('creates the PaymentIntent at Stripe with amount in cents, currency, metadata and an idempotency key', async () => {
    const inv = await sentInvoice(owner, customerId, 120.5);
    const res = await create({ invoiceId: inv });
    expect(res.statusCode, res.body).toBe(201);
    const intent = res.json().data;
    expect(intent).toMatchObject({
      invoiceId: inv,
      amount: 120.5,
      currency: 'USD',
      status: 'requires_payment_method',
      source: 'API',
      paymentId: null,
    });
    expect(intent.id).toMatch(/^pint_/);
    expect(intent.processorIntentId).toMatch(/^pi_/);
    expect(intent.clientSecret).toBe(`${intent.processorIntentId}_secret_standin`);

    const sent = stripe.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payment_intents');
    const last = sent[sent.length - 1];
    expect(last?.authorization).toBe(`Bearer ${KEY}`);
    expect(last?.idempotencyKey).toBe(`${intent.id}:create`);
    expect(last?.form).toMatchObject({
      amount: '12050',
      currency: 'usd',
      'metadata[invoiceId]': inv,
      'metadata[intentId]': intent.id,
      'metadata[organizationId]': owner.organizationId,
      'automatic_payment_methods[enabled]': 'true',
    });

    // A part of the balance; the list filters and paginates.
    const part = await create({ invoiceId: inv, amount: 20.25 });
    expect(part.statusCode, part.body).toBe(201);
    expect(stripe.requests[stripe.requests.length - 1]?.form.amount).toBe('2025');
    const list = await owner.call('GET', '/api/payments/intents', undefined, { query: { invoiceId: inv, limit: '1' } });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((i: { id: string }) => i.id)).toEqual([part.json().data.id]);
    expect(list.headers.link).toContain('rel="next"');
    const rest = await owner.call('GET', '/api/payments/intents', undefined, {
      query: { invoiceId: inv, startingAfter: part.json().data.id },
    });
    expect(rest.json().data.map((i: { id: string }) => i.id)).toEqual([intent.id]);
    const got = await owner.call('GET', `/api/payments/intents/${intent.id}`);
    expect(got.json().data).toEqual(intent);

    // A client retry with the same Idempotency-Key gets the same intent; Stripe is asked once.
    const calls = stripe.requests.length;
    const headers = { 'idempotency-key': `retry-${inv}` };
    const first = await owner.call('POST', '/api/payments/intents', { invoiceId: inv, amount: 1 }, { headers });
    const retry = await owner.call('POST', '/api/payments/intents', { invoiceId: inv, amount: 1 }, { headers });
    expect(first.statusCode, first.body).toBe(201);
    expect(retry.json().data.id).toBe(first.json().data.id);
    expect(stripe.requests.length).toBe(calls + 1);
  });

  it('refuses an amount above the balance, a draft, paid or void invoice, another organization’s invoice: nothing at Stripe, nothing here', async () => {
    const open = await sentInvoice(owner, customerId, 100);
    const draft = (await owner.call('POST', '/api/invoices', { customerId, lineItems: [line('Work', 1, 10)] })).json()
      .data.id;
    const paid = await sentInvoice(owner, customerId, 10);
    await owner.call('POST', `/api/invoices/${paid}/payments`, { amount: 10, method: 'cash' });
    const voided = await sentInvoice(owner, customerId, 10);
    await owner.call('POST', `/api/invoices/${voided}/void`);
    const foreign = await sentInvoice(other, (await createCustomer(h, other)).id, 10);

    const stripeBefore = stripe.requests.length;
    const before = { ...(await footprint(h, owner.organizationId)), intents: await intentRows(owner.organizationId) };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ invoiceId: open, amount: 100.01 }, 400, 'amount'],
      [{ invoiceId: open, amount: 0 }, 400, 'amount'],
      [{ invoiceId: open, amount: 1.005 }, 400, 'amount'],
      [{ invoiceId: draft }, 409, 'draft'],
      [{ invoiceId: paid }, 409, 'paid'],
      [{ invoiceId: voided }, 409, 'void'],
      [{ invoiceId: foreign }, 400, 'invoiceId'],
      [{ invoiceId: 'inv_nope' }, 400, 'invoiceId'],
      [{}, 400, 'invoiceId'],
      [{ invoiceId: open, status: 'succeeded' }, 400, 'status'],
    ];
    for (const [body, status, hint] of cases) {
      const res = await create(body);
      expect(res.statusCode, `${JSON.stringify(body)} ${res.body}`).toBe(status);
      expect(res.body).toContain(hint);
    }
    expect(stripe.requests.length).toBe(stripeBefore);
    expect({ ...(await footprint(h, owner.organizationId)), intents: await intentRows(owner.organizationId) }).toEqual(
      before,
    );
  });

  it('records payment_intent.succeeded once, even delivered concurrently, and marks the intent succeeded', async () => {
    const inv = await sentInvoice(owner, customerId, 80);
    const intent = (await create({ invoiceId: inv })).json().data;
    const event = intentEvent('payment_intent.succeeded', intent, { amount: 8000, amount_received: 8000 });
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const answers = await Promise.all([1, 2, 3].map(() => deliver(h, owner.organizationId, event)));
      expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200]);
      expect(answers.map((a) => a.json().data.outcome).sort()).toEqual(['duplicate', 'duplicate', 'recorded']);
    });
    expect(events.filter((e) => e.type === 'payment.received')).toHaveLength(1);
    const after = (await owner.call('GET', `/api/payments/intents/${intent.id}`)).json().data;
    expect(after.status).toBe('succeeded');
    const payments = (await owner.call('GET', '/api/payments', undefined, { query: { invoiceId: inv } })).json().data;
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({
      id: after.paymentId,
      amount: 80,
      processorPaymentId: intent.processorIntentId,
    });
    expect((await owner.call('GET', `/api/invoices/${inv}`)).json().data.status).toBe('paid');

    // Late events never move a succeeded intent back.
    const before = await footprint(h, owner.organizationId);
    for (const late of ['payment_intent.processing', 'payment_intent.payment_failed', 'payment_intent.canceled']) {
      const res = await deliver(h, owner.organizationId, intentEvent(late, intent));
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.outcome).toBe('duplicate');
    }
    expect((await owner.call('GET', `/api/payments/intents/${intent.id}`)).json().data.status).toBe('succeeded');
    expect(await footprint(h, owner.organizationId)).toEqual(before);
  });

  it('moves the intent by processing and payment_failed in event order, whatever order they arrive in', async () => {
    const inv = await sentInvoice(owner, customerId, 30);
    const intent = (await create({ invoiceId: inv })).json().data;
    const t = Math.floor(Date.now() / 1000);
    const processing = { ...intentEvent('payment_intent.processing', intent), created: t };
    const failed = {
      ...intentEvent('payment_intent.payment_failed', intent, { last_payment_error: { message: 'Card declined' } }),
      created: t + 5,
    };
    // The failure arrives first, then the older processing: the intent waits for a new card.
    expect((await deliver(h, owner.organizationId, failed)).json().data.outcome).toBe('recorded');
    expect((await deliver(h, owner.organizationId, processing)).json().data.outcome).toBe('duplicate');
    const got = (await owner.call('GET', `/api/payments/intents/${intent.id}`)).json().data;
    expect(got).toMatchObject({ status: 'requires_payment_method', lastError: 'Card declined' });
    // A newer processing moves it on; then success, then an old canceled changes nothing.
    const again = { ...intentEvent('payment_intent.processing', intent), created: t + 10 };
    expect((await deliver(h, owner.organizationId, again)).json().data.outcome).toBe('recorded');
    expect((await owner.call('GET', `/api/payments/intents/${intent.id}`)).json().data.status).toBe('processing');
    // Stripe events are acknowledged whatever their type.
    const unknown = await deliver(h, owner.organizationId, stripeEvent('customer.created', { id: 'cus_1' }));
    expect(unknown.json().data.outcome).toBe('ignored');
  });

  it('records the money of a success that follows a cancel event (money taken is never dropped)', async () => {
    const inv = await sentInvoice(owner, customerId, 15);
    const intent = (await create({ invoiceId: inv })).json().data;
    await deliver(h, owner.organizationId, intentEvent('payment_intent.canceled', intent));
    expect((await owner.call('GET', `/api/payments/intents/${intent.id}`)).json().data.status).toBe('canceled');
    const res = await deliver(
      h,
      owner.organizationId,
      intentEvent('payment_intent.succeeded', intent, { amount: 1500, amount_received: 1500 }),
    );
    expect(res.json().data.outcome).toBe('recorded');
    expect((await owner.call('GET', `/api/payments/intents/${intent.id}`)).json().data.status).toBe('succeeded');
  });

  it('records a success whose event outruns Stripe’s answer to the creation: once, intent succeeded', async () => {
    const inv = await sentInvoice(owner, customerId, 33);
    let delivered: { statusCode: number; body: string } | undefined;
    stripe.beforeAnswer = async (_r, body) => {
      const pi = body as { id: string; metadata: { intentId: string; invoiceId: string } };
      delivered = await deliver(
        h,
        owner.organizationId,
        intentEvent(
          'payment_intent.succeeded',
          { processorIntentId: pi.id, id: pi.metadata.intentId, invoiceId: pi.metadata.invoiceId },
          { amount: 3300, amount_received: 3300 },
        ),
      );
    };
    const res = await create({ invoiceId: inv });
    expect(delivered?.statusCode, delivered?.body).toBe(200);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ status: 'succeeded', amount: 33 });
    expect(res.json().data.paymentId).toMatch(/^pay_/);
    const payments = (await owner.call('GET', '/api/payments', undefined, { query: { invoiceId: inv } })).json().data;
    expect(payments).toHaveLength(1);
    expect((await owner.call('GET', `/api/invoices/${inv}`)).json().data.status).toBe('paid');
  });

  it('cancels at Stripe and here; a succeeded or canceled intent cannot be canceled', async () => {
    const inv = await sentInvoice(owner, customerId, 40);
    const intent = (await create({ invoiceId: inv })).json().data;
    const res = await owner.call('POST', `/api/payments/intents/${intent.id}/cancel`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.status).toBe('canceled');
    const call = stripe.requests[stripe.requests.length - 1];
    expect(call?.path).toBe(`/v1/payment_intents/${intent.processorIntentId}/cancel`);
    expect(call?.idempotencyKey).toBe(`${intent.id}:cancel`);
    const again = await owner.call('POST', `/api/payments/intents/${intent.id}/cancel`);
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('INVALID_STATE');

    const list = await owner.call('GET', '/api/payments/intents', undefined, { query: { status: 'canceled' } });
    expect(list.json().data.map((i: { id: string }) => i.id)).toContain(intent.id);
    expect(
      (await owner.call('GET', '/api/payments/intents', undefined, { query: { status: 'nope' } })).statusCode,
    ).toBe(400);
  });

  it('lets the customer pay from the portal link, and refuses a link to anything but an invoice', async () => {
    const inv = (
      await owner.call('POST', '/api/invoices', { customerId, lineItems: [line('Mowing', 1, 64.99)] })
    ).json().data.id;
    const sent = await owner.call('POST', `/api/invoices/${inv}/send`);
    const path = new URL(sent.json().data.portalUrl).pathname;
    const res = await h.app.inject({ method: 'POST', url: `${path}/pay`, payload: {} });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({ invoiceId: inv, amount: 64.99, source: 'PORTAL' });
    expect(stripe.requests[stripe.requests.length - 1]?.form).toMatchObject({
      amount: '6499',
      'metadata[invoiceId]': inv,
    });
    // Coming back to the link: the same intent, Stripe not asked again.
    const calls = stripe.requests.length;
    const back = await h.app.inject({ method: 'POST', url: `${path}/pay` });
    expect(back.statusCode, back.body).toBe(201);
    expect(back.json().data.id).toBe(res.json().data.id);
    expect(stripe.requests.length).toBe(calls);
    // Another amount changes the open intent (at Stripe too) rather than opening a second one.
    const part = await h.app.inject({ method: 'POST', url: `${path}/pay`, payload: { amount: 10 } });
    expect(part.json().data).toMatchObject({ id: res.json().data.id, amount: 10 });
    const over = await h.app.inject({ method: 'POST', url: `${path}/pay`, payload: { amount: 65 } });
    expect(over.statusCode).toBe(400);
    const bad = await h.app.inject({ method: 'POST', url: '/api/portal/pt_nope/pay', payload: {} });
    expect(bad.statusCode).toBe(404);
  });

  it('answers 409 when Stripe refuses the key and 503 when Stripe is down, recording nothing', async () => {
    const inv = await sentInvoice(owner, customerId, 25);
    const before = await intentRows(owner.organizationId);
    stripe.badKeys.add(KEY);
    try {
      const res = await create({ invoiceId: inv });
      expect(res.statusCode, res.body).toBe(409);
      expect(res.json().error.message).toContain('stripeSecretKey');
    } finally {
      stripe.badKeys.delete(KEY);
    }
    stripe.down = true;
    try {
      const res = await create({ invoiceId: inv });
      expect(res.statusCode, res.body).toBe(503);
    } finally {
      stripe.down = false;
    }
    expect(await intentRows(owner.organizationId)).toBe(before);
  });
});
