import { count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { depositPayments, deposits } from '../../src/db/schema/index.js';
import { addDays } from '../../src/platform/dates.js';
import { createCustomer } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import {
  chargeRefunded,
  deliver,
  footprint,
  pay,
  paymentIntent,
  STRIPE_SECRET,
  sentInvoice,
  stripeEvent,
  stripeRefund,
} from './helpers.js';
import { type StripeStandIn, startStripeStandIn } from './stripe-stand-in.js';

const KEY = 'sk_test_deposits0123456789abcdef';

describe('deposits and reconciliation', () => {
  let h: Harness;
  let stripe: StripeStandIn;
  let owner: TestUser;
  let other: TestUser;
  let customerId: string;
  let n = 0;

  beforeAll(async () => {
    stripe = await startStripeStandIn();
    h = await createHarness(stripe.env);
    owner = await newTenant(h);
    other = await newTenant(h, { name: 'Other Org' });
    customerId = (await createCustomer(h, owner)).id;
    const res = await owner.call('PATCH', '/api/settings', {
      stripeSecretKey: KEY,
      stripeWebhookSecret: STRIPE_SECRET,
    });
    expect(res.statusCode, res.body).toBe(200);
    timezone = res.json().data.timezone;
  });
  afterAll(async () => {
    await h?.close();
    await stripe?.close();
  });

  const depositFootprint = async (organizationId: string) => ({
    ...(await footprint(h, organizationId)),
    deposits: Number(
      (await h.admin.db.select({ n: count() }).from(deposits).where(eq(deposits.organizationId, organizationId)))[0]?.n,
    ),
    links: Number(
      (
        await h.admin.db
          .select({ n: count() })
          .from(depositPayments)
          .where(eq(depositPayments.organizationId, organizationId))
      )[0]?.n,
    ),
  });
  const deposit = (body: Record<string, unknown>, user = owner) => user.call('POST', '/api/payments/deposits', body);
  let timezone = 'UTC';
  /** Today in the organization's timezone (what "not after today" and paymentDate use). */
  const today = () => new Intl.DateTimeFormat('en-CA', { timeZone: timezone }).format(new Date());
  /** A Stripe card payment (payment_intent.succeeded) of `cents`; returns its PaymentIntent id. */
  const cardPayment = async (cents: number) => {
    const inv = await sentInvoice(owner, customerId, cents / 100);
    const pi = `pi_dep${Date.now().toString(36)}${++n}`;
    const res = await deliver(
      h,
      owner.organizationId,
      stripeEvent('payment_intent.succeeded', paymentIntent(pi, cents, inv)),
    );
    expect(res.statusCode, res.body).toBe(200);
    return pi;
  };
  const payout = (id: string, amount: number, currency = 'usd') =>
    stripeEvent('payout.paid', {
      id,
      object: 'payout',
      amount,
      currency,
      arrival_date: Math.floor(Date.now() / 1000),
      status: 'paid',
      statement_descriptor: 'STRIPE PAYOUT',
    });

  it('deposits cash and check payments once, with their total; refuses bad runs writing nothing', async () => {
    const cash = await pay(owner, await sentInvoice(owner, customerId, 40), 40, 'cash');
    const check = await pay(owner, await sentInvoice(owner, customerId, 60), 60, 'check', '1001');
    const ach = await pay(owner, await sentInvoice(owner, customerId, 5), 5, 'ach');
    const foreign = await pay(other, await sentInvoice(other, (await createCustomer(h, other)).id, 10), 10, 'cash');

    const res = await deposit({ depositDate: today(), reference: 'Slip 17', paymentIds: [cash, check] });
    expect(res.statusCode, res.body).toBe(201);
    const dep = res.json().data;
    expect(dep).toMatchObject({
      depositDate: today(),
      reference: 'Slip 17',
      amount: 100,
      paymentsTotal: 100,
      difference: 0,
      origin: 'MANUAL',
      processorPayoutId: null,
    });
    expect([...dep.paymentIds].sort()).toEqual([cash, check].sort());
    expect((await owner.call('GET', `/api/payments/deposits/${dep.id}`)).json().data).toEqual(dep);

    const fresh = await pay(owner, await sentInvoice(owner, customerId, 7), 7, 'cash');
    const before = await depositFootprint(owner.organizationId);
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ depositDate: today(), paymentIds: [] }, 400, 'paymentIds'],
      [{ depositDate: today() }, 400, 'paymentIds'],
      [{ depositDate: today(), paymentIds: [foreign] }, 400, 'paymentIds.0'],
      [{ depositDate: today(), paymentIds: [fresh, 'pay_nope'] }, 400, 'paymentIds.1'],
      [{ depositDate: today(), paymentIds: [fresh, fresh] }, 400, 'paymentIds.1'],
      [{ depositDate: today(), paymentIds: [ach] }, 400, 'paymentIds.0'],
      [{ depositDate: '2999-01-01', paymentIds: [fresh] }, 400, 'depositDate'],
      [{ depositDate: 'yesterday', paymentIds: [fresh] }, 400, 'depositDate'],
      [{ depositDate: today(), paymentIds: [fresh], organizationId: 'x' }, 400, 'organizationId'],
      [{ depositDate: today(), paymentIds: [fresh, cash] }, 409, cash],
    ];
    for (const [body, status, hint] of cases) {
      const r = await deposit(body);
      expect(r.statusCode, `${JSON.stringify(body)} ${r.body}`).toBe(status);
      expect(r.body).toContain(hint);
    }
    expect(await depositFootprint(owner.organizationId)).toEqual(before);
  });

  it('keeps a payment in one deposit when two runs race for it (unique constraint)', async () => {
    const a = await pay(owner, await sentInvoice(owner, customerId, 11), 11, 'cash');
    const b = await pay(owner, await sentInvoice(owner, customerId, 12), 12, 'check');
    const answers = await Promise.all([
      deposit({ depositDate: today(), paymentIds: [a, b] }),
      deposit({ depositDate: today(), paymentIds: [b] }),
      deposit({ depositDate: today(), paymentIds: [b, a] }),
    ]);
    expect(answers.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
    for (const r of answers.filter((x) => x.statusCode === 409)) expect(r.json().error.code).toBe('CONFLICT');
    const links = await h.admin.db
      .select()
      .from(depositPayments)
      .where(eq(depositPayments.organizationId, owner.organizationId));
    expect(links.filter((l) => l.paymentId === b)).toHaveLength(1);
  });

  it('records payout.paid as a deposit matched to its card payments through Stripe, once', async () => {
    const pi1 = await cardPayment(5000);
    const pi2 = await cardPayment(2500);
    const po = `po_match${++n}`;
    stripe.payouts.set(po, [pi1, pi2]);
    // 75.00 of payments, 72.52 reached the bank: Stripe's fees show as the difference.
    const res = await deliver(h, owner.organizationId, payout(po, 7252));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.outcome).toBe('recorded');
    const call = stripe.requests[stripe.requests.length - 1];
    expect(call?.path).toBe('/v1/balance_transactions');
    expect(call?.query.get('payout')).toBe(po);
    expect(call?.authorization).toBe(`Bearer ${KEY}`);

    const list = await owner.call('GET', '/api/payments/deposits', undefined, { query: { origin: 'STRIPE_PAYOUT' } });
    const dep = list.json().data.find((d: { processorPayoutId: string }) => d.processorPayoutId === po);
    expect(dep).toMatchObject({ amount: 72.52, paymentsTotal: 75, difference: -2.48, origin: 'STRIPE_PAYOUT' });
    expect(dep.paymentIds).toHaveLength(2);

    const before = await depositFootprint(owner.organizationId);
    const replay = await deliver(h, owner.organizationId, payout(po, 7252));
    expect(replay.json().data.outcome).toBe('duplicate');
    expect(await depositFootprint(owner.organizationId)).toEqual(before);

    // The bank returns the payout: its deposit goes, and its payments wait for the bank again.
    const failed = await deliver(h, owner.organizationId, { ...payout(po, 7252), type: 'payout.failed' });
    expect(failed.json().data.outcome).toBe('recorded');
    expect((await owner.call('GET', `/api/payments/deposits/${dep.id}`)).statusCode).toBe(404);
    const report = (await owner.call('GET', '/api/payments/reconciliation')).json().data;
    expect(report.undepositedPayments.map((p: { processorPaymentId: string }) => p.processorPaymentId)).toEqual(
      expect.arrayContaining([pi1, pi2]),
    );
    const again = await deliver(h, owner.organizationId, { ...payout(po, 7252), type: 'payout.failed' });
    expect(again.json().data.outcome).toBe('duplicate');
  });

  it('a period close never refuses nor loses what Stripe did: late payments, refunds and payouts post on the first open day', async () => {
    // operations.md §11: after a close no ledger line is dated on or before closedThrough; Stripe's
    // events about money it already moved answer 200 and are booked on the first open day.
    const org = await newTenant(h, { name: 'Closed Books Org', timezone: 'UTC' });
    await org.call('PATCH', '/api/settings', { stripeSecretKey: KEY, stripeWebhookSecret: STRIPE_SECRET });
    const cust = (await createCustomer(h, org)).id;
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'UTC' }).format(new Date());
    const secondsAt = (date: string) => Math.floor(Date.parse(`${date}T12:00:00Z`) / 1000);
    const event = (type: string, object: Record<string, unknown>, created = Math.floor(Date.now() / 1000)) => ({
      ...stripeEvent(type, object),
      created,
    });
    const paymentOf = async (pi: string) =>
      (
        (await org.call('GET', '/api/payments', undefined, { query: { limit: '100' } })).json().data as {
          id: string;
          processorPaymentId: string;
          paymentDate: string;
        }[]
      ).find((p) => p.processorPaymentId === pi);
    const entryDates = async (sourceType: string, sourceId: string) =>
      (
        (await org.call('GET', '/api/ledger/entries', undefined, { query: { sourceType, sourceId } })).json().data as {
          entryDate: string;
        }[]
      ).map((e) => e.entryDate);
    const trialBalance = async (asOf: string) =>
      (await org.call('GET', '/api/ledger/trial-balance', undefined, { query: { asOf } })).json().data;
    const linesIn = async (closedThrough: string) =>
      rowsOf<{ n: number }>(
        await h.admin.db.execute(sql`
          SELECT count(*)::int AS n FROM ledger_lines l
          JOIN ledger_entries e ON e.organization_id = l.organization_id AND e.id = l.entry_id
          WHERE l.organization_id = ${org.organizationId} AND e.entry_date <= ${closedThrough}`),
      )[0]?.n;

    // Before the close: a card payment charged five days ago (to be refunded after the close).
    const early = `pi_early${++n}`;
    const inv1 = await sentInvoice(org, cust, 80);
    const paid = await deliver(
      h,
      org.organizationId,
      event('payment_intent.succeeded', paymentIntent(early, 8000, inv1), secondsAt(addDays(day, -5))),
    );
    expect(paid.statusCode, paid.body).toBe(200);
    const earlyPayment = await paymentOf(early);
    expect(earlyPayment?.paymentDate).toBe(addDays(day, -5));
    const inv2 = await sentInvoice(org, cust, 40);
    const inv3 = await sentInvoice(org, cust, 25);

    const yesterday = addDays(day, -1);
    expect((await org.call('POST', '/api/ledger/close', { through: yesterday })).statusCode).toBe(200);
    const closedBalance = await trialBalance(yesterday);
    const closedLines = await linesIn(yesterday);

    // A charge made three days ago whose payment_intent.succeeded arrives after the close.
    const late = `pi_late${++n}`;
    const lateEvent = event('payment_intent.succeeded', paymentIntent(late, 4000, inv2), secondsAt(addDays(day, -3)));
    const lateAnswer = await deliver(h, org.organizationId, lateEvent);
    expect(lateAnswer.statusCode, lateAnswer.body).toBe(200);
    expect(lateAnswer.json().data.outcome).toBe('recorded');
    const latePayment = await paymentOf(late);
    // The payment keeps the day the customer paid; the books take it on the first open day.
    expect(latePayment?.paymentDate).toBe(addDays(day, -3));
    expect(await entryDates('payment', latePayment?.id as string)).toEqual([day]);
    expect((await deliver(h, org.organizationId, lateEvent)).json().data.outcome).toBe('duplicate');

    // Refunds of the payment of the closed period: at Stripe's dashboard (charge.refunded) and through the API.
    const refundAnswer = await deliver(
      h,
      org.organizationId,
      event('charge.refunded', chargeRefunded(early, 8000, [stripeRefund(`re_closed${++n}`, early, 1500)])),
    );
    expect(refundAnswer.statusCode, refundAnswer.body).toBe(200);
    expect(refundAnswer.json().data.outcome).toBe('recorded');
    const apiRefund = await org.call('POST', `/api/payments/${earlyPayment?.id}/refunds`, { amount: 5 });
    expect(apiRefund.statusCode, apiRefund.body).toBe(201);
    const refunds = (await org.call('GET', `/api/payments/${earlyPayment?.id}`)).json().data.refunds as {
      id: string;
    }[];
    expect(refunds).toHaveLength(2);
    for (const r of refunds) expect(await entryDates('refund', r.id)).toEqual([day]);

    // A payout that reached the bank four days ago, reported after the close: its deposit is dated today.
    const po = `po_closed${++n}`;
    stripe.payouts.set(po, [late]);
    const payoutEvent = {
      ...payout(po, 3900),
      data: { object: { ...payout(po, 3900).data.object, arrival_date: secondsAt(addDays(day, -4)) } },
    };
    const payoutAnswer = await deliver(h, org.organizationId, payoutEvent);
    expect(payoutAnswer.statusCode, payoutAnswer.body).toBe(200);
    expect(payoutAnswer.json().data.outcome).toBe('recorded');
    const stripeDeposit = (
      (await org.call('GET', '/api/payments/deposits', undefined, { query: { origin: 'STRIPE_PAYOUT' } })).json()
        .data as { processorPayoutId: string; depositDate: string; paymentsTotal: number }[]
    ).find((d) => d.processorPayoutId === po);
    expect(stripeDeposit).toMatchObject({ depositDate: day, paymentsTotal: 40 });
    // What the office types in is still refused (a request can be corrected; Stripe's event cannot).
    const manual = await deposit({ depositDate: yesterday, paymentIds: [earlyPayment?.id] }, org);
    expect(manual.statusCode, manual.body).toBe(409);
    expect(manual.json().error.code).toBe('PERIOD_CLOSED');

    // Books closed through today: Stripe's money still lands, on tomorrow's date.
    expect((await org.call('POST', '/api/ledger/close', { through: day })).statusCode).toBe(200);
    const linesToday = await linesIn(day);
    const todayPi = `pi_today${++n}`;
    const todayAnswer = await deliver(
      h,
      org.organizationId,
      event('payment_intent.succeeded', paymentIntent(todayPi, 2500, inv3)),
    );
    expect(todayAnswer.statusCode, todayAnswer.body).toBe(200);
    const todayPayment = await paymentOf(todayPi);
    expect(await entryDates('payment', todayPayment?.id as string)).toEqual([addDays(day, 1)]);
    const refundToday = await deliver(
      h,
      org.organizationId,
      event('refund.created', stripeRefund(`re_today${++n}`, todayPi, 500)),
    );
    expect(refundToday.statusCode, refundToday.body).toBe(200);
    const lastPayout = `po_today${++n}`;
    stripe.payouts.set(lastPayout, [todayPi]);
    const lastPayoutAnswer = await deliver(h, org.organizationId, payout(lastPayout, 2000));
    expect(lastPayoutAnswer.statusCode, lastPayoutAnswer.body).toBe(200);

    // Nothing landed in a closed day: the closed trial balance and line counts are as they were.
    expect(await trialBalance(yesterday)).toEqual(closedBalance);
    expect(await linesIn(yesterday)).toBe(closedLines);
    expect(await linesIn(day)).toBe(linesToday);
    const tb = await trialBalance(addDays(day, 1));
    expect(tb.balanced).toBe(true);
    expect(tb.totalDebit).toBe(tb.totalCredit);
  });

  it('refuses a payout with a bad signature, a stale one or another currency: 400, nothing written', async () => {
    const before = await depositFootprint(owner.organizationId);
    const event = payout(`po_bad${++n}`, 1000);
    const answers = [
      await deliver(h, owner.organizationId, event, { secret: 'whsec_wrong_0123456789abcdef' }),
      await deliver(h, owner.organizationId, event, { signature: null }),
      await deliver(h, owner.organizationId, event, { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
      await deliver(h, owner.organizationId, payout(`po_eur${++n}`, 1000, 'eur')),
      await deliver(h, other.organizationId, event),
    ];
    expect(answers.map((r) => r.statusCode)).toEqual([400, 400, 400, 400, 400]);
    expect(await depositFootprint(owner.organizationId)).toEqual(before);
  });

  it('reports undeposited payments, deposit differences and unmatched payouts', async () => {
    // A fresh organization so the report holds only this test's money.
    const org = await newTenant(h, { name: 'Report Org' });
    await org.call('PATCH', '/api/settings', { stripeSecretKey: KEY, stripeWebhookSecret: STRIPE_SECRET });
    const cust = (await createCustomer(h, org)).id;
    const c1 = await pay(org, await sentInvoice(org, cust, 20), 20, 'cash');
    const c2 = await pay(org, await sentInvoice(org, cust, 30), 30, 'check', '2002');
    const c3 = await pay(org, await sentInvoice(org, cust, 45.5), 45.5, 'check', '2003');
    await pay(org, await sentInvoice(org, cust, 9), 9, 'ach');
    const inv = await sentInvoice(org, cust, 12);
    await deliver(
      h,
      org.organizationId,
      stripeEvent('payment_intent.succeeded', paymentIntent(`pi_rep${++n}`, 1200, inv)),
    );
    const short = await deposit({ depositDate: today(), paymentIds: [c1, c2], amount: 49 }, org);
    expect(short.statusCode, short.body).toBe(201);
    const po = `po_lonely${++n}`;
    await deliver(h, org.organizationId, payout(po, 999));

    const res = await org.call('GET', '/api/payments/reconciliation', undefined, {
      query: { from: today(), to: today() },
    });
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json().data;
    expect(report.undepositedPayments.map((p: { id: string }) => p.id)).toContain(c3);
    expect(report.undepositedPayments.map((p: { method: string }) => p.method).sort()).toEqual(['card', 'check']);
    expect(report).toMatchObject({ undepositedTotal: 57.5, undepositedCount: 2 });
    const manual = report.deposits.find((d: { id: string }) => d.id === short.json().data.id);
    expect(manual).toMatchObject({ amount: 49, paymentsTotal: 50, difference: -1 });
    expect(report.unmatchedPayouts.map((d: { processorPayoutId: string }) => d.processorPayoutId)).toEqual([po]);

    // Depositing the rest empties the drawer.
    await deposit({ depositDate: today(), paymentIds: [c3] }, org);
    const after = (await org.call('GET', '/api/payments/reconciliation')).json().data;
    expect(after.undepositedPayments.map((p: { method: string }) => p.method)).toEqual(['card']);
    expect(after.undepositedTotal).toBe(12);

    expect(
      (
        await org.call('GET', '/api/payments/reconciliation', undefined, {
          query: { from: '2026-02-02', to: '2026-02-01' },
        })
      ).statusCode,
    ).toBe(400);
    expect(
      (await org.call('GET', '/api/payments/reconciliation', undefined, { query: { from: 'soon' } })).statusCode,
    ).toBe(400);
  });
});
