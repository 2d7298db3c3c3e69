import { eq } from 'drizzle-orm';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startTasks } from '../../src/background/runner.js';
import { webhookDeliveries } from '../../src/db/schema/index.js';
import { createWebhookTask } from '../../src/delivery/delivery.task.js';
import { createWorkflowTask } from '../../src/modules/workflows/workflows.tasks.js';
import { createCustomer, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { type Receiver, startReceiver, waitFor } from '../webhooks/helpers.js';

/**
 * The scenario, end to end through the real worker: a workflow emits
 * workflow.big_invoice when an invoice over 1,000.00 is created, and the delivery
 * arrives only at the endpoint that named it (spec 6.1: `*` excludes workflow events).
 */
describe('workflow.big_invoice reaches only the endpoint that names it', () => {
  let h: Harness;
  let owner: TestUser;
  let worker: RunningWorker;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    worker = startTasks([createWebhookTask({ pollMs: 50 }), createWorkflowTask({ pollMs: 50 })], {
      config: h.config,
      database: h.database,
      log: pino({ level: 'silent' }),
    });
  });
  afterAll(async () => {
    await worker?.stop();
    for (const r of receivers) await r.close();
    await h?.close();
  });

  const endpoint = async (events: string[]) => {
    const r = await startReceiver();
    receivers.push(r);
    const res = await owner.call('POST', '/api/webhooks', { url: r.url, events });
    expect(res.statusCode).toBe(201);
    return r;
  };
  const eventsOf = (r: Receiver) => r.received.map((x) => JSON.parse(x.body) as { event: string; data: unknown });

  it('delivers workflow.big_invoice to the naming endpoint only, and not for a small invoice', async () => {
    const naming = await endpoint(['workflow.big_invoice']);
    const everything = await endpoint(['*']);
    const invoices = await endpoint(['invoice.created']);
    const otherWorkflow = await endpoint(['workflow.small_invoice']);
    const wf = await owner.call('POST', '/api/workflows', {
      name: 'big_invoice',
      trigger: { event: 'invoice.created' },
      conditions: [{ field: 'invoice.total', op: 'gt', value: 1000 }],
      actions: [{ type: 'emit' }],
    });
    expect(wf.statusCode).toBe(201);
    const customer = await createCustomer(h, owner);
    const small = await owner.call('POST', '/api/invoices', {
      customerId: customer.id,
      lineItems: [line('Small', 1, 1000)],
    });
    const big = await owner.call('POST', '/api/invoices', {
      customerId: customer.id,
      lineItems: [line('Big', 1, 1000.01)],
    });
    expect(small.statusCode).toBe(201);
    expect(big.statusCode).toBe(201);

    const delivery = await waitFor(() => eventsOf(naming)[0], 'the workflow.big_invoice delivery');
    expect(naming.received[0]?.headers['x-service-event']).toBe('workflow.big_invoice');
    expect(delivery).toMatchObject({
      event: 'workflow.big_invoice',
      organizationId: owner.organizationId,
      data: {
        workflow: { id: wf.json().data.id, name: 'big_invoice' },
        trigger: { event: 'invoice.created' },
        data: { invoiceId: big.json().data.id, invoice: { total: 1000.01 } },
      },
    });
    // The others got their own events, and by then the workflow event was fanned out too.
    await waitFor(() => eventsOf(everything).filter((e) => e.event === 'invoice.created').length === 2, '* deliveries');
    await waitFor(() => eventsOf(invoices).length === 2, 'invoice.created deliveries');
    const runs = (await owner.call('GET', `/api/workflows/${wf.json().data.id}/runs`)).json().data;
    expect(runs).toHaveLength(1);
    expect(runs[0].status).toBe('succeeded');
    const rows = await h.admin.db
      .select({ event: webhookDeliveries.event })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.event, 'workflow.big_invoice'));
    expect(rows).toHaveLength(1);
    expect(eventsOf(everything).some((e) => e.event.startsWith('workflow.'))).toBe(false);
    expect(eventsOf(invoices).every((e) => e.event === 'invoice.created')).toBe(true);
    expect(otherWorkflow.received).toHaveLength(0);
    expect(eventsOf(naming)).toHaveLength(1);
  });
});
