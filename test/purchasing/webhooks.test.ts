import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../src/background/runner.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { type Receiver, startReceiver, startWorker, waitFor } from '../webhooks/helpers.js';
import { newVendor } from './helpers.js';

const ELEVEN = [
  'purchase-order.created',
  'purchase-order.sent',
  'purchase-order.received',
  'purchase-order.cancelled',
  'bill.created',
  'bill.approved',
  'bill.paid',
  'bill.voided',
  'bill_payment.created',
  'bill_payment.settled',
  'bill_payment.failed',
];

/** The "done when": every purchasing event reaches a registered endpoint, signed, exactly once. */
describe('purchasing events at a registered endpoint', () => {
  let h: Harness;
  let owner: TestUser;
  let worker: RunningWorker;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    receiver = await startReceiver();
    worker = startWorker(h.database, h.config);
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    await h?.close();
  });

  it('delivers all eleven, each once, verifiable with Stripe’s verifier', async () => {
    const ep = (await owner.call('POST', '/api/webhooks', { url: receiver.url, events: ['*'] })).json().data;
    await owner.call('PATCH', '/api/settings', { billApprovalThreshold: 100 });
    const vendor = await newVendor(owner);
    const lineItems = [{ description: 'Mulch', quantity: 10, unitCost: 30 }];
    const po = (await owner.call('POST', '/api/purchase-orders', { vendorId: vendor.id, lineItems })).json().data;
    await owner.call('POST', `/api/purchase-orders/${po.id}/send`);
    await owner.call('POST', `/api/purchase-orders/${po.id}/receive`);
    const cancelled = (await owner.call('POST', '/api/purchase-orders', { vendorId: vendor.id, lineItems })).json()
      .data;
    await owner.call('POST', `/api/purchase-orders/${cancelled.id}/cancel`);
    const bill = (await owner.call('POST', `/api/purchase-orders/${po.id}/bill`)).json().data;
    expect((await owner.call('POST', `/api/bills/${bill.id}/post`)).json().data.status).toBe('awaiting_approval');
    await owner.call('POST', `/api/bills/${bill.id}/approve`);
    const payment = (
      await owner.call('POST', '/api/bill-payments', {
        vendorId: vendor.id,
        method: 'ach',
        allocations: [{ billId: bill.id, amount: 300 }],
      })
    ).json().data;
    await owner.call('POST', `/api/bill-payments/${payment.id}/settle`);
    await owner.call('POST', `/api/bill-payments/${payment.id}/fail`, { reason: 'R01' });
    await owner.call('POST', `/api/bills/${bill.id}/void`);

    const seen = await waitFor(() => {
      const names = receiver.received.map((r) => JSON.parse(r.body).event as string);
      return ELEVEN.every((e) => names.includes(e)) ? names : null;
    }, 'all eleven purchasing events');
    // Two orders were created (one then cancelled); every other event happened once.
    for (const e of ELEVEN) {
      expect(
        seen.filter((n) => n === e),
        e,
      ).toHaveLength(e === 'purchase-order.created' ? 2 : 1);
    }
    for (const r of receiver.received) {
      const header = r.headers['x-service-signature'] as string;
      expect(() => Stripe.webhooks.constructEvent(r.body, header, ep.secret, 300)).not.toThrow();
    }
    const paid = receiver.received.map((r) => JSON.parse(r.body)).find((b) => b.event === 'bill.paid');
    expect(paid.data).toMatchObject({
      billId: bill.id,
      billNumber: bill.billNumber,
      vendorId: vendor.id,
      total: 300,
      balance: 0,
    });
  });
});
