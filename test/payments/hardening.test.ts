import { and, eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deposits, paymentIntents } from '../../src/db/schema/index.js';
import { reconciliation } from '../../src/modules/payments/deposits/deposits.service.js';
import { workerTasks } from '../../src/modules/tasks.js';
import { inTenant, systemActor } from '../../src/platform/tenancy.js';
import { createCustomer } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { deliver, pay, paymentIntent, STRIPE_SECRET, sentInvoice, stripeEvent } from './helpers.js';
import { type StripeStandIn, startStripeStandIn } from './stripe-stand-in.js';

const KEY = 'sk_test_hardening0123456789abcdef';

describe('payments hardening: portal intents, closed invoices, payouts, the report', () => {
  let h: Harness;
  let stripe: StripeStandIn;
  let owner: TestUser;
  let customerId: string;
  let n = 0;

  beforeAll(async () => {
    stripe = await startStripeStandIn();
    h = await createHarness(stripe.env);
    owner = await newTenant(h);
    customerId = (await createCustomer(h, owner)).id;
    const res = await owner.call('PATCH', '/api/settings', {
      stripeSecretKey: KEY,
      stripeWebhookSecret: STRIPE_SECRET,
    });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(async () => {
    await h?.close();
    await stripe?.close();
  });

  /** A fresh customer link to the invoice (each send issues one). */
  const portalPath = async (invoiceId: string) => {
    const sent = await owner.call('POST', `/api/invoices/${invoiceId}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    return new URL(sent.json().data.portalUrl).pathname;
  };
  const portalPay = (path: string, body: Record<string, unknown> = {}) =>
    h.app.inject({ method: 'POST', url: `${path}/pay`, payload: body });
  /** PaymentIntents Stripe holds for an invoice. */
  const createdAtStripe = (invoiceId: string) =>
    [...stripe.intents.values()].filter((i) => (i.metadata as Record<string, string>).invoiceId === invoiceId);
  const rowsOf = (invoiceId: string) =>
    h.admin.db
      .select()
      .from(paymentIntents)
      .where(and(eq(paymentIntents.organizationId, owner.organizationId), eq(paymentIntents.invoiceId, invoiceId)));
  /** One pass of the worker's task that closes intents of closed invoices (as `npm run worker` runs it). */
  const closeIntents = async () => {
    const task = workerTasks.find((t) => t.name === 'payments.close-intents');
    expect(task, 'worker task payments.close-intents').toBeDefined();
    return task?.run({ config: h.config, database: h.database, log: pino({ level: 'silent' }), wake: () => {} });
  };

  it('answers concurrent portal pay calls with one intent, at Stripe and here', async () => {
    const inv = await sentInvoice(owner, customerId, 80);
    const path = await portalPath(inv);
    const answers = await Promise.all(Array.from({ length: 6 }, () => portalPay(path)));
    for (const a of answers) expect(a.statusCode, a.body).toBe(201);
    const ids = new Set(answers.map((a) => a.json().data.id));
    expect(ids.size).toBe(1);
    expect(new Set(answers.map((a) => a.json().data.clientSecret)).size).toBe(1);
    expect(createdAtStripe(inv)).toHaveLength(1);
    // Calls that found the same reservation asked Stripe under its one idempotency key.
    const asked = stripe.requests.filter(
      (r) => r.path === '/v1/payment_intents' && r.form['metadata[invoiceId]'] === inv,
    );
    expect(new Set(asked.map((r) => r.idempotencyKey)).size).toBe(1);
    const rows = await rowsOf(inv);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ source: 'PORTAL', status: 'requires_payment_method', amountCents: 8000 });
  });

  it('changes the amount of the open portal intent at Stripe instead of leaving it open beside a new one', async () => {
    const inv = await sentInvoice(owner, customerId, 120);
    const path = await portalPath(inv);
    const full = await portalPay(path);
    expect(full.statusCode, full.body).toBe(201);
    const part = await portalPay(path, { amount: 45.5 });
    expect(part.statusCode, part.body).toBe(201);
    expect(part.json().data).toMatchObject({ id: full.json().data.id, amount: 45.5 });
    const pi = full.json().data.processorIntentId as string;
    expect(stripe.intents.get(pi)).toMatchObject({ amount: 4550, status: 'requires_payment_method' });
    expect(createdAtStripe(inv)).toHaveLength(1);
    expect((await rowsOf(inv)).map((r) => [r.status, r.amountCents])).toEqual([['requires_payment_method', 4550]]);
    // Once the customer's payment is processing, another amount waits for it.
    await deliver(
      h,
      owner.organizationId,
      stripeEvent('payment_intent.processing', {
        ...paymentIntent(pi, 4550, inv),
        status: 'processing',
        amount_received: 0,
      }),
    );
    const during = await portalPay(path, { amount: 20 });
    expect(during.statusCode, during.body).toBe(409);
    expect((await portalPay(path, { amount: 45.5 })).json().data.id).toBe(full.json().data.id);
  });

  it('limits pay calls per customer link and minute (429 with Retry-After)', async () => {
    const inv = await sentInvoice(owner, customerId, 30);
    const path = await portalPath(inv);
    for (let i = 0; i < 10; i++) expect((await portalPay(path)).statusCode).toBe(201);
    const limited = await portalPay(path);
    expect(limited.statusCode, limited.body).toBe(429);
    expect(limited.json().error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another link (another invoice) has its own budget.
    expect((await portalPay(await portalPath(await sentInvoice(owner, customerId, 31)))).statusCode).toBe(201);
  });

  it('cancels open intents at Stripe and here once the invoice is paid by check, voided or written off', async () => {
    const paidInv = await sentInvoice(owner, customerId, 60);
    const voidInv = await sentInvoice(owner, customerId, 70);
    const offInv = await sentInvoice(owner, customerId, 90);
    const openInv = await sentInvoice(owner, customerId, 40);
    const started = async (inv: string) => {
      const res = await owner.call('POST', '/api/payments/intents', { invoiceId: inv });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data as { id: string; processorIntentId: string };
    };
    const onPaid = await started(paidInv);
    const fromPortal = await portalPay(await portalPath(voidInv));
    expect(fromPortal.statusCode, fromPortal.body).toBe(201);
    const onVoid = fromPortal.json().data as { id: string; processorIntentId: string };
    const onOff = await started(offInv);
    const stillOpen = await started(openInv);

    const cancelsBefore = stripe.requests.filter((r) => r.path.endsWith('/cancel')).length;
    await pay(owner, paidInv, 60, 'check', '3001');
    expect((await owner.call('POST', `/api/invoices/${voidInv}/void`)).statusCode).toBe(200);
    expect((await owner.call('POST', `/api/invoices/${offInv}/write-off`)).statusCode).toBe(200);
    // The invoice's own transactions never called Stripe.
    expect(stripe.requests.filter((r) => r.path.endsWith('/cancel')).length).toBe(cancelsBefore);

    expect(await closeIntents()).toBe(3);
    for (const intent of [onPaid, onVoid, onOff]) {
      expect(stripe.intents.get(intent.processorIntentId)?.status).toBe('canceled');
      expect((await owner.call('GET', `/api/payments/intents/${intent.id}`)).json().data.status).toBe('canceled');
    }
    expect(stripe.intents.get(stillOpen.processorIntentId)?.status).toBe('requires_payment_method');
    expect((await owner.call('GET', `/api/payments/intents/${stillOpen.id}`)).json().data.status).toBe(
      'requires_payment_method',
    );
    const cancels = stripe.requests.filter((r) => r.path.endsWith('/cancel')).slice(cancelsBefore);
    expect(cancels).toHaveLength(3);
    for (const c of cancels) expect(c.authorization).toBe(`Bearer ${KEY}`);
    expect(await closeIntents()).toBe(0);

    // A customer who paid anyway: recorded as any payment, the excess kept as unapplied.
    const late = await deliver(
      h,
      owner.organizationId,
      stripeEvent('payment_intent.succeeded', paymentIntent(onPaid.processorIntentId, 6000, paidInv)),
    );
    expect(late.statusCode, late.body).toBe(200);
    const recorded = (
      await owner.call('GET', '/api/payments', undefined, { query: { invoiceId: paidInv, method: 'card' } })
    ).json().data;
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ amount: 60, unappliedAmount: 60 });
    expect((await owner.call('GET', `/api/payments/intents/${onPaid.id}`)).json().data.status).toBe('succeeded');
  });

  const payout = (type: string, id: string) =>
    stripeEvent(type, {
      id,
      object: 'payout',
      amount: 1000,
      currency: 'usd',
      arrival_date: Math.floor(Date.now() / 1000),
      status: type === 'payout.paid' ? 'paid' : 'failed',
      failure_code: type === 'payout.paid' ? null : 'account_closed',
    });
  const noDeposit = async (po: string) =>
    expect(
      await h.admin.db
        .select()
        .from(deposits)
        .where(and(eq(deposits.organizationId, owner.organizationId), eq(deposits.processorPayoutId, po))),
    ).toEqual([]);

  it('remembers a payout.failed that came before its payout.paid: no deposit', async () => {
    // The failure first, then (Stripe does not guarantee order) the paid event: no deposit.
    const first = `po_failedfirst${++n}`;
    expect((await deliver(h, owner.organizationId, payout('payout.failed', first))).json().data.outcome).toBe(
      'recorded',
    );
    const paid = await deliver(h, owner.organizationId, payout('payout.paid', first));
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().data.outcome).toBe('duplicate');
    await noDeposit(first);
  });

  it('asks Stripe for a payout’s transactions outside any transaction (a payout.failed meanwhile is not lost)', async () => {
    // The failure arrives while payout.paid waits for Stripe's answer: had that wait been
    // inside the event's transaction, the failure could neither see nor wait for its deposit.
    const racing = `po_racing${++n}`;
    stripe.payouts.set(racing, []);
    let failedDuringWait: number | undefined;
    stripe.beforeAnswer = async (r) => {
      if (r.path !== '/v1/balance_transactions') return;
      failedDuringWait = (await deliver(h, owner.organizationId, payout('payout.failed', racing))).statusCode;
    };
    try {
      const answer = await deliver(h, owner.organizationId, payout('payout.paid', racing));
      expect(answer.statusCode, answer.body).toBe(200);
    } finally {
      stripe.beforeAnswer = undefined;
    }
    expect(failedDuringWait).toBe(200);
    await noDeposit(racing);
  });

  it('lists the undeposited payments up to the cap, and counts and totals them all in SQL', async () => {
    const org = await newTenant(h, { name: 'Report Cap Org' });
    const cust = (await createCustomer(h, org)).id;
    for (const amount of [10, 20, 30, 40, 50.25]) await pay(org, await sentInvoice(org, cust, amount), amount, 'cash');
    const report = await inTenant(h.database.db, org.organizationId, systemActor('test'), (ctx) =>
      reconciliation(ctx, {}, 2),
    );
    expect(report.undepositedPayments).toHaveLength(2);
    expect(report.undepositedPayments.map((p) => p.amount)).toEqual([10, 20]);
    expect(report).toMatchObject({ undepositedCount: 5, undepositedTotal: 150.25 });
  });
});
