import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../src/background/runner.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { ok200, RETRY_ENV, type Receiver, startReceiver, startWorker, waitFor } from '../webhooks/helpers.js';

/**
 * The modules together, as an integrator sees them: real API calls write events in
 * their own transactions, the worker fans them out, and the receiver gets signed
 * deliveries that Stripe's public verifier accepts.
 */
describe('end to end: API change → outbox → signed delivery', () => {
  let h: Harness;
  let owner: TestUser;
  let worker: RunningWorker;
  let receiver: Receiver;

  beforeAll(async () => {
    h = await createHarness(RETRY_ENV);
    owner = await newTenant(h);
    worker = startWorker(h.database, h.config, {});
    receiver = await startReceiver(ok200);
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver?.close();
    await h?.close();
  });

  it('delivers customer, invoice and payment events from real requests, and nothing for a refused one', async () => {
    const reg = await owner.call('POST', '/api/webhooks', { url: receiver.url, events: ['*'] });
    expect(reg.statusCode).toBe(201);
    const secret = reg.json().data.secret as string;

    const customer = await owner.call('POST', '/api/customers', {
      firstName: 'Maple',
      lastName: 'Street HOA',
      email: 'board@maple.example',
    });
    expect(customer.statusCode).toBe(201);
    const customerId = customer.json().data.id as string;

    // Refused: nothing written, so nothing delivered.
    const bad = await owner.call('POST', '/api/invoices', { customerId, lineItems: [] });
    expect(bad.statusCode).toBe(400);

    const invoice = await owner.call('POST', '/api/invoices', {
      customerId,
      lineItems: [{ description: 'Spring cleanup', quantity: 1, unitPrice: 120.5 }],
    });
    expect(invoice.statusCode).toBe(201);
    const invoiceId = invoice.json().data.id as string;
    expect((await owner.call('POST', `/api/invoices/${invoiceId}/send`)).statusCode).toBe(200);
    const paid = await owner.call('POST', `/api/invoices/${invoiceId}/payments`, {
      amount: 120.5,
      paymentDate: invoice.json().data.invoiceDate,
      method: 'card',
    });
    expect(paid.statusCode).toBe(201);
    expect(paid.json().data.status).toBe('paid');

    const expected = [
      'customer.created',
      'invoice.created',
      'invoice.sent',
      'invoice.status_changed',
      'invoice.paid',
      'invoice.status_changed',
      'payment.received',
    ];
    await waitFor(() => receiver.received.length >= expected.length, 'all deliveries');
    const got = receiver.received.map((r) => r.headers['x-service-event'] as string);
    expect([...got].sort()).toEqual([...expected].sort());

    for (const delivery of receiver.received) {
      Stripe.webhooks.constructEvent(delivery.body, delivery.headers['x-service-signature'] as string, secret, 300);
      const body = JSON.parse(delivery.body);
      expect(body.organizationId).toBe(owner.organizationId);
    }
    const paidEvent = receiver.received.find((r) => r.headers['x-service-event'] === 'invoice.paid');
    const data = JSON.parse(paidEvent?.body ?? '{}').data;
    expect(data).toMatchObject({ invoiceId, oldStatus: 'SENT', newStatus: 'PAID', amountDue: 0 });
    expect(data.invoiceNumber).toMatch(/^INV-\d{6}$/);
  });
});
