import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsDuring } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { accountBalances, newVendor } from './helpers.js';

/** The "done when": order mulch, receive, bill over the threshold, approve, pay by ACH, return, read the books. */
describe('purchasing walk-through', () => {
  let h: Harness;
  let owner: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('orders, receives, bills, approves, pays, returns, and the books balance', async () => {
    expect((await owner.call('PATCH', '/api/settings', { billApprovalThreshold: 500 })).statusCode).toBe(200);
    const vendor = await newVendor(owner, { email: 'orders@mulch.example', paymentTermsDays: 15 });

    const po = (
      await owner.call('POST', '/api/purchase-orders', {
        vendorId: vendor.id,
        lineItems: [{ description: 'Hardwood mulch (yd)', quantity: 20, unitCost: 32.5 }],
      })
    ).json().data;
    expect(po).toMatchObject({ poNumber: 'PO-000001', status: 'draft', total: 650 });

    const sent = await owner.call('POST', `/api/purchase-orders/${po.id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json().data).toMatchObject({ status: 'sent', emailedTo: ['orders@mulch.example'] });
    expect((await owner.call('POST', `/api/purchase-orders/${po.id}/receive`)).json().data.status).toBe('received');

    const billRes = await owner.call('POST', `/api/purchase-orders/${po.id}/bill`);
    expect(billRes.statusCode, billRes.body).toBe(201);
    const bill = billRes.json().data;
    expect(bill).toMatchObject({ billNumber: 'BILL-000001', status: 'draft', total: 650, purchaseOrderId: po.id });

    const posted = (await owner.call('POST', `/api/bills/${bill.id}/post`)).json().data;
    expect(posted.status).toBe('awaiting_approval');
    expect((await accountBalances(h, owner.organizationId)).get('2000')).toBeUndefined();

    const approvedEvents = await eventsDuring(h, owner.organizationId, async () => {
      const approved = await owner.call('POST', `/api/bills/${bill.id}/approve`);
      expect(approved.json().data.status).toBe('open');
    });
    expect(approvedEvents.map((e) => e.type)).toEqual(['bill.approved']);
    expect((await accountBalances(h, owner.organizationId)).get('2000')).toBe(-65000);

    const payRes = await owner.call('POST', '/api/bill-payments', {
      vendorId: vendor.id,
      method: 'ach',
      allocations: [{ billId: bill.id, amount: 650 }],
    });
    expect(payRes.statusCode, payRes.body).toBe(201);
    const payment = payRes.json().data;
    expect(payment).toMatchObject({ status: 'pending', amount: 650 });
    expect((await owner.call('GET', `/api/bills/${bill.id}`)).json().data).toMatchObject({
      status: 'paid',
      balance: 0,
    });

    const failEvents = await eventsDuring(h, owner.organizationId, async () => {
      expect((await owner.call('POST', `/api/bill-payments/${payment.id}/settle`)).json().data.status).toBe('settled');
      const failed = await owner.call('POST', `/api/bill-payments/${payment.id}/fail`, {
        reason: 'R01 insufficient funds',
      });
      expect(failed.statusCode, failed.body).toBe(200);
      expect(failed.json().data).toMatchObject({ status: 'failed', failureReason: 'R01 insufficient funds' });
    });
    expect(failEvents.map((e) => e.type)).toEqual(['bill_payment.settled', 'bill_payment.failed']);
    expect(failEvents[1]?.data).toMatchObject({
      billPaymentId: payment.id,
      vendorId: vendor.id,
      amount: 650,
      billIds: [bill.id],
    });
    expect((await owner.call('GET', `/api/bills/${bill.id}`)).json().data).toMatchObject({
      status: 'open',
      balance: 650,
      amountPaid: 0,
    });

    const tb = (await owner.call('GET', '/api/ledger/trial-balance')).json().data;
    expect(tb.balanced).toBe(true);
    expect(tb.totalDebit).toBe(tb.totalCredit);
    const ap = tb.accounts.find((a: { code: string }) => a.code === '2000');
    expect(ap).toMatchObject({ balance: 650 });
    expect(tb.accounts.find((a: { code: string }) => a.code === '5000')).toMatchObject({ balance: 650 });
    expect(tb.accounts.find((a: { code: string }) => a.code === '1000')).toMatchObject({ balance: 0 });
  });
});
