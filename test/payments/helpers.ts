import { count, eq } from 'drizzle-orm';
import Stripe from 'stripe';
import { events, invoices, paymentRefunds, payments } from '../../src/db/schema/index.js';
import { line } from '../factories.js';
import type { Harness, TestUser } from '../harness.js';

/** A sent invoice of `total` (one line, no tax), optionally due on `dueDate`. */
export async function sentInvoice(owner: TestUser, customerId: string, total: number, dueDate?: string) {
  const res = await owner.call('POST', '/api/invoices', {
    customerId,
    lineItems: [line('Work', 1, total)],
    ...(dueDate ? { invoiceDate: '2026-01-01', dueDate } : {}),
  });
  if (res.statusCode !== 201) throw new Error(res.body);
  const id = res.json().data.id as string;
  const sent = await owner.call('POST', `/api/invoices/${id}/send`);
  if (sent.statusCode !== 200) throw new Error(sent.body);
  return id;
}

/** Records a payment through the invoice route and returns the new payment's id. */
export async function pay(owner: TestUser, invoiceId: string, amount: number, method = 'cash', reference?: string) {
  const res = await owner.call('POST', `/api/invoices/${invoiceId}/payments`, {
    amount,
    method,
    ...(reference ? { reference } : {}),
  });
  if (res.statusCode !== 201) throw new Error(res.body);
  const list = await owner.call('GET', '/api/payments', undefined, { query: { invoiceId, limit: '1' } });
  return list.json().data[0].id as string;
}

/** Rows that a refused request must leave unchanged. */
export async function footprint(h: Harness, organizationId: string) {
  const n = async (table: typeof payments | typeof paymentRefunds | typeof events) =>
    Number((await h.admin.db.select({ n: count() }).from(table).where(eq(table.organizationId, organizationId)))[0]?.n);
  const inv = await h.admin.db
    .select({ id: invoices.id, status: invoices.status, paid: invoices.amountPaidCents })
    .from(invoices)
    .where(eq(invoices.organizationId, organizationId))
    .orderBy(invoices.id);
  const pays = await h.admin.db
    .select({ id: payments.id, refunded: payments.refundedCents, unapplied: payments.unappliedCents })
    .from(payments)
    .where(eq(payments.organizationId, organizationId))
    .orderBy(payments.id);
  return {
    payments: await n(payments),
    refunds: await n(paymentRefunds),
    events: await n(events),
    invoices: inv,
    paymentRows: pays,
  };
}

export const STRIPE_SECRET = 'whsec_test_0123456789abcdefghijklmnop';

/** A Stripe Event envelope as Stripe sends it. */
export function stripeEvent(
  type: string,
  object: Record<string, unknown>,
  id = `evt_${Math.random().toString(36).slice(2)}`,
) {
  return {
    id,
    object: 'event',
    api_version: '2024-06-20',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

export function paymentIntent(id: string, amount: number, invoiceId: string | undefined, currency = 'usd') {
  return {
    id,
    object: 'payment_intent',
    amount,
    amount_received: amount,
    currency,
    status: 'succeeded',
    metadata: invoiceId === undefined ? {} : { invoiceId },
    latest_charge: `ch_${id.slice(3)}`,
  };
}

export function stripeRefund(id: string, intentId: string, amount: number, currency = 'usd') {
  return {
    id,
    object: 'refund',
    amount,
    currency,
    payment_intent: intentId,
    charge: `ch_${intentId.slice(3)}`,
    status: 'succeeded',
    reason: 'requested_by_customer',
    created: Math.floor(Date.now() / 1000),
  };
}

export function chargeRefunded(intentId: string, amount: number, refunds: ReturnType<typeof stripeRefund>[]) {
  return {
    id: `ch_${intentId.slice(3)}`,
    object: 'charge',
    amount,
    amount_refunded: refunds.reduce((s, r) => s + r.amount, 0),
    currency: 'usd',
    payment_intent: intentId,
    refunded: true,
    refunds: { object: 'list', data: refunds, has_more: false },
  };
}

/** POSTs `payload` to the organization's Stripe URL, signed as Stripe signs it. */
export async function deliver(
  h: Harness,
  organizationId: string,
  payload: unknown,
  opts: { secret?: string; timestamp?: number; raw?: string; signature?: string | null } = {},
) {
  const raw = opts.raw ?? JSON.stringify(payload, null, 2);
  const header =
    opts.signature === null
      ? undefined
      : (opts.signature ??
        Stripe.webhooks.generateTestHeaderString({
          payload: raw,
          secret: opts.secret ?? STRIPE_SECRET,
          ...(opts.timestamp !== undefined ? { timestamp: opts.timestamp } : {}),
        }));
  return h.app.inject({
    method: 'POST',
    url: `/api/payments/stripe/${organizationId}`,
    headers: { 'content-type': 'application/json; charset=utf-8', ...(header ? { 'stripe-signature': header } : {}) },
    payload: raw,
  });
}
