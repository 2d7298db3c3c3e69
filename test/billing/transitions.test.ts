import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredEstimates } from '../../src/modules/estimates/estimates.tasks.js';
import {
  ESTIMATE_STATUSES,
  ESTIMATE_TRIGGER_EVENTS,
  type EstimateStatus,
  type EstimateTrigger,
  estimateMachine,
} from '../../src/modules/estimates/estimates.transitions.js';
import { sweepOverdueInvoices } from '../../src/modules/invoices/invoices.tasks.js';
import {
  INVOICE_STATUSES,
  type InvoiceStatus,
  type InvoiceTrigger,
  invoiceMachine,
  TRIGGER_EVENT,
} from '../../src/modules/invoices/invoices.transitions.js';
import { next } from '../../src/platform/state-machine.js';
import { createCustomer, type EventRow, eventsOf, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Every (status, trigger) pair of both transition tables, driven through the API
 * (or the worker sweep for time-driven triggers): allowed pairs land in the
 * table's target with exactly the specified events; refused pairs answer 409 and
 * change and emit nothing.
 */
describe('transition tables, exhaustively', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  const later = new Date('2026-12-31T12:00:00Z');

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  const eventsFor = async (key: 'invoiceId' | 'estimateId', id: string, before: Set<string>) =>
    (await eventsOf(h, owner.organizationId)).filter((e) => !before.has(e.id) && e.data[key] === id);
  const seen = async () => new Set((await eventsOf(h, owner.organizationId)).map((e) => e.id));

  describe('invoices', () => {
    const get = async (id: string) => (await owner.call('GET', `/api/invoices/${id}`)).json().data;
    const ok = (res: { statusCode: number; body: string }) => {
      expect(res.statusCode, res.body).toBeLessThan(300);
    };

    async function invoiceIn(status: InvoiceStatus): Promise<string> {
      const res = await owner.call('POST', '/api/invoices', {
        customerId,
        lineItems: [line('Work', 1, 100)],
        invoiceDate: '2026-01-01',
        dueDate: '2026-01-15',
      });
      const id = res.json().data.id as string;
      const send = async () => ok(await owner.call('POST', `/api/invoices/${id}/send`));
      if (status === 'sent' || status === 'partially_paid' || status === 'paid' || status === 'overdue') await send();
      if (status === 'written_off') {
        await send();
        ok(await owner.call('POST', `/api/invoices/${id}/write-off`));
      }
      if (status === 'partially_paid')
        ok(await owner.call('POST', `/api/invoices/${id}/payments`, { amount: 1, method: 'cash' }));
      if (status === 'paid')
        ok(await owner.call('POST', `/api/invoices/${id}/payments`, { amount: 100, method: 'cash' }));
      if (status === 'overdue') await sweepOverdueInvoices(h.database, later);
      if (status === 'void') ok(await owner.call('POST', `/api/invoices/${id}/void`));
      expect((await get(id)).status).toBe(status);
      return id;
    }

    async function fire(id: string, trigger: InvoiceTrigger) {
      const inv = await get(id);
      const outstanding = inv.total - inv.amountPaid;
      switch (trigger) {
        case 'send':
          return owner.call('POST', `/api/invoices/${id}/send`);
        case 'void':
          return owner.call('POST', `/api/invoices/${id}/void`);
        case 'write_off':
          return owner.call('POST', `/api/invoices/${id}/write-off`);
        case 'partial_payment':
          return owner.call('POST', `/api/invoices/${id}/payments`, { amount: 1, method: 'card' });
        case 'full_payment':
          return owner.call('POST', `/api/invoices/${id}/payments`, { amount: outstanding, method: 'ach' });
        case 'overdue':
          await sweepOverdueInvoices(h.database, later);
          return undefined;
        case 'due_date_extended':
        case 'due_date_extended_after_payment':
          return owner.call('PUT', `/api/invoices/${id}`, { dueDate: '2099-01-01' });
      }
    }

    const extending = (t: InvoiceTrigger) => t.startsWith('due_date_extended');

    // Refund triggers need a payment to refund: test/payments/refunds.test.ts drives each of them.
    const triggers = (Object.keys(TRIGGER_EVENT) as InvoiceTrigger[]).filter((t) => !t.includes('refund'));
    for (const from of INVOICE_STATUSES) {
      for (const trigger of triggers) {
        const to = next(invoiceMachine, from, trigger);
        it(`${from} --${trigger}--> ${to ?? '409'}`, async () => {
          const id = await invoiceIn(from);
          // Reopening after a payment needs a payment first (it leaves an overdue invoice overdue).
          if (trigger === 'due_date_extended_after_payment' && from === 'overdue') {
            ok(await owner.call('POST', `/api/invoices/${id}/payments`, { amount: 1, method: 'cash' }));
          }
          const before = await seen();
          const res = await fire(id, trigger);
          const events = await eventsFor('invoiceId', id, before);
          if (!to) {
            // Moving a due date is an edit: allowed in every state, it just moves no other status.
            if (res && extending(trigger)) expect(res.statusCode, res.body).toBe(200);
            else if (res) {
              expect(res.statusCode, res.body).toBe(409);
              expect(res.json().error.code).toBe('INVALID_STATE');
            }
            expect((await get(id)).status).toBe(from);
            expect(events).toEqual([]);
            return;
          }
          if (res) expect(res.statusCode, res.body).toBeLessThan(300);
          expect((await get(id)).status).toBe(to);
          const expected = [
            ...(TRIGGER_EVENT[trigger] ? [TRIGGER_EVENT[trigger]] : []),
            ...(to !== from ? ['invoice.status_changed'] : []),
            ...(trigger === 'partial_payment' || trigger === 'full_payment' ? ['payment.received'] : []),
          ];
          expect(events.map((e: EventRow) => e.type).sort()).toEqual(expected.sort());
          for (const e of events.filter((x) => x.type !== 'payment.received')) {
            expect(e.data).toMatchObject({ oldStatus: from.toUpperCase(), newStatus: to.toUpperCase() });
            expect(typeof e.data.amountDue).toBe('number');
            expect(e.data.invoiceNumber).toMatch(/^INV-/);
          }
        });
      }
    }

    it('the sweep moves each invoice once even when run concurrently', async () => {
      const ids = [await invoiceIn('sent'), await invoiceIn('sent')];
      const before = await seen();
      const moved = await Promise.all([0, 1, 2].map(() => sweepOverdueInvoices(h.database, later)));
      expect(moved.reduce((a, b) => a + b, 0)).toBe(2);
      for (const id of ids) {
        expect((await eventsFor('invoiceId', id, before)).map((e) => e.type).sort()).toEqual([
          'invoice.overdue',
          'invoice.status_changed',
        ]);
      }
    });
  });

  describe('estimates', () => {
    const get = async (id: string) => (await owner.call('GET', `/api/estimates/${id}`)).json().data;

    async function estimateIn(status: EstimateStatus): Promise<{ id: string; portal?: string }> {
      const res = await owner.call('POST', '/api/estimates', {
        customerId,
        lineItems: [line('Patio', 2, 250)],
        estimateDate: '2026-01-01',
        expirationDate: '2026-01-31',
      });
      const id = res.json().data.id as string;
      let portal: string | undefined;
      if (status !== 'draft' && status !== 'converted') {
        const sent = await owner.call('POST', `/api/estimates/${id}/send`);
        expect(sent.statusCode, sent.body).toBe(200);
        portal = new URL(sent.json().data.portalUrl).pathname;
      }
      if (status === 'viewed')
        expect((await h.app.inject({ method: 'GET', url: portal as string })).statusCode).toBe(200);
      if (status === 'approved') await owner.call('POST', `/api/estimates/${id}/approve`);
      if (status === 'declined') await owner.call('POST', `/api/estimates/${id}/decline`);
      if (status === 'expired') await sweepExpiredEstimates(h.database, later);
      if (status === 'converted') await owner.call('POST', `/api/estimates/${id}/convert`);
      expect((await get(id)).status).toBe(status);
      return { id, ...(portal ? { portal } : {}) };
    }

    const triggers = Object.keys(ESTIMATE_TRIGGER_EVENTS) as EstimateTrigger[];
    for (const from of ESTIMATE_STATUSES) {
      for (const trigger of triggers) {
        const to = next(estimateMachine, from, trigger);
        it(`${from} --${trigger}--> ${to ?? '409'}`, async () => {
          const { id, portal } = await estimateIn(from);
          const before = await seen();
          let res: { statusCode: number; body: string; json(): { error: { code: string } } } | undefined;
          if (trigger === 'expire') await sweepExpiredEstimates(h.database, later);
          else if (trigger === 'view') {
            // Only a sent document has a link; opening it is never refused, it just does not move other states.
            if (!portal) return;
            res = await h.app.inject({ method: 'GET', url: portal });
            expect(res.statusCode).toBe(200);
            expect((await get(id)).status).toBe(to ?? from);
            expect(await eventsFor('estimateId', id, before)).toEqual([]);
            return;
          } else if (trigger === 'convert_to_job')
            res = await owner.call('POST', `/api/estimates/${id}/convert-to-job`, { scheduledDate: '2026-02-01' });
          else res = await owner.call('POST', `/api/estimates/${id}/${trigger}`);
          const events = await eventsFor('estimateId', id, before);
          if (!to) {
            if (res) {
              expect(res.statusCode, res.body).toBe(409);
              expect(res.json().error.code).toBe('INVALID_STATE');
            }
            expect((await get(id)).status).toBe(from);
            expect(events).toEqual([]);
            return;
          }
          // convert-to-job creates a job: 201; the other moves answer 200.
          if (res) expect(res.statusCode, res.body).toBe(trigger === 'convert_to_job' ? 201 : 200);
          expect((await get(id)).status).toBe(to);
          const rule = ESTIMATE_TRIGGER_EVENTS[trigger];
          const expected = [
            ...(rule.specific ? [rule.specific] : []),
            ...(rule.statusChanged && to !== from ? ['estimate.status_changed'] : []),
          ];
          expect(events.map((e) => e.type).sort()).toEqual(expected.sort());
          for (const e of events)
            expect(e.data).toMatchObject({ oldStatus: from.toUpperCase(), newStatus: to.toUpperCase() });
        });
      }
    }
  });
});
