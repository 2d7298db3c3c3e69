import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobs } from '../../src/db/schema/index.js';
import { newId } from '../../src/platform/ids.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { createCustomer, deliverMail, eventsDuring, later, mailText, startSmtp } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { expectRefused, newVendor } from './helpers.js';

const lineItems = [
  { description: 'Hardwood mulch (yd)', quantity: 2.5, unitCost: 30.01 },
  { description: 'Blade', quantity: 1, unitCost: 19.99, equipmentId: 'eqp_mower1' },
];

async function newJob(h: Harness, owner: TestUser) {
  const customer = await createCustomer(h, owner);
  return inTenant(h.database.db, owner.organizationId, { kind: 'user', id: 't', role: 'owner' }, async (ctx) => {
    const id = newId('job');
    await ctx.tx.insert(jobs).values({
      id,
      organizationId: ctx.organizationId,
      customerId: customer.id,
      status: 'scheduled',
      scheduledDate: '2026-06-01',
    });
    return id;
  });
}

describe('vendors and purchase orders', () => {
  let h: Harness;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let owner: TestUser;
  let member: TestUser;

  beforeAll(async () => {
    smtp = await startSmtp();
    h = await createHarness({ SMTP_URL: smtp.url });
    owner = await newTenant(h);
    member = await addMember(h, owner, 'member');
  });
  afterAll(async () => {
    await h?.close();
    await smtp?.close();
  });

  it('vendors: CRUD by any role, default terms from settings, no unknown fields', async () => {
    const res = await member.call('POST', '/api/vendors', { name: ' Acme Stone ', email: 'sales@acme.example' });
    expect(res.statusCode, res.body).toBe(201);
    const v = res.json().data;
    expect(v).toMatchObject({ name: 'Acme Stone', paymentTermsDays: 30, customPaymentTerms: false, active: true });
    const patched = await member.call('PATCH', `/api/vendors/${v.id}`, { paymentTermsDays: 45, active: false });
    expect(patched.json().data).toMatchObject({ paymentTermsDays: 45, customPaymentTerms: true, active: false });
    expect(
      (await member.call('GET', '/api/vendors', undefined, { query: { active: 'false' } }))
        .json()
        .data.map((x: { id: string }) => x.id),
    ).toContain(v.id);
    expect((await owner.call('POST', '/api/vendors', { name: 'x', id: 'ven_mine' })).statusCode).toBe(400);
    expect((await owner.call('POST', '/api/vendors', { name: '' })).statusCode).toBe(400);
    expect((await member.call('DELETE', `/api/vendors/${v.id}`)).statusCode).toBe(204);
    expect((await member.call('GET', `/api/vendors/${v.id}`)).statusCode).toBe(404);
  });

  it('a vendor with orders cannot be deleted (409); an inactive vendor takes no new orders', async () => {
    const v = await newVendor(owner);
    expect((await owner.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems })).statusCode).toBe(201);
    const del = await owner.call('DELETE', `/api/vendors/${v.id}`);
    expect(del.statusCode).toBe(409);
    expect(del.json().error.code).toBe('CONFLICT');
    await owner.call('PATCH', `/api/vendors/${v.id}`, { active: false });
    await expectRefused(
      h,
      owner,
      () => owner.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems }),
      400,
      'vendorId',
    );
  });

  it('creates PO-000001.. with exact totals, event created once; any role may order', async () => {
    const fresh = await newTenant(h, { name: 'Numbering' });
    const v = await newVendor(fresh);
    const events = await eventsDuring(h, fresh.organizationId, async () => {
      const res = await fresh.call('POST', '/api/purchase-orders', {
        vendorId: v.id,
        lineItems,
        notes: 'gate code 1234',
      });
      expect(res.statusCode, res.body).toBe(201);
      // 2.5 × 30.01 = 75.025 → 75.03 (half away from zero); + 19.99
      expect(res.json().data).toMatchObject({ poNumber: 'PO-000001', status: 'draft', total: 95.02 });
      expect(res.json().data.lineItems[1]).toMatchObject({ equipmentId: 'eqp_mower1', amount: 19.99 });
    });
    expect(events.map((e) => e.type)).toEqual(['purchase-order.created']);
    expect(events[0]?.data).toMatchObject({ poNumber: 'PO-000001', vendorId: v.id, total: 95.02 });
    const second = await fresh.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems });
    expect(second.json().data.poNumber).toBe('PO-000002');
  });

  it('refuses a foreign vendor or job, and bad lines, naming the field; nothing written', async () => {
    const other = await newTenant(h, { name: 'Other' });
    const foreignVendor = await newVendor(other);
    const foreignJob = await newJob(h, other);
    const v = await newVendor(owner);
    await expectRefused(
      h,
      owner,
      () => owner.call('POST', '/api/purchase-orders', { vendorId: foreignVendor.id, lineItems }),
      400,
      'vendorId',
    );
    await expectRefused(
      h,
      owner,
      () => owner.call('POST', '/api/purchase-orders', { vendorId: v.id, jobId: foreignJob, lineItems }),
      400,
      'jobId',
    );
    await expectRefused(
      h,
      owner,
      () =>
        owner.call('POST', '/api/purchase-orders', {
          vendorId: v.id,
          lineItems: [{ description: 'x', quantity: 1.0001, unitCost: 1 }],
        }),
      400,
      'lineItems[0].quantity',
    );
    await expectRefused(
      h,
      owner,
      () =>
        owner.call('POST', '/api/purchase-orders', {
          vendorId: v.id,
          orderDate: '2026-05-02',
          expectedDate: '2026-05-01',
          lineItems,
        }),
      400,
      'expectedDate',
    );
    const job = await newJob(h, owner);
    const ok = await owner.call('POST', '/api/purchase-orders', { vendorId: v.id, jobId: job, lineItems });
    expect(ok.json().data.jobId).toBe(job);
    expect(
      (await owner.call('GET', '/api/purchase-orders', undefined, { query: { jobId: job } })).json().data,
    ).toHaveLength(1);
  });

  it('draft → sent (mails the vendor) → received → bill; every transition emits once; illegal ones 409', async () => {
    const v = await newVendor(owner, { email: 'orders@mulch.example', name: 'Mulch Co' });
    const po = (await member.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems })).json().data;
    await expectRefused(h, owner, () => member.call('POST', `/api/purchase-orders/${po.id}/receive`), 409);
    await expectRefused(h, owner, () => owner.call('POST', `/api/purchase-orders/${po.id}/bill`), 409);
    await deliverMail(h);
    const mailsBefore = smtp.received.length;
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const sent = await member.call('POST', `/api/purchase-orders/${po.id}/send`);
      expect(sent.statusCode, sent.body).toBe(200);
      expect(sent.json().data).toMatchObject({ status: 'sent', emailedTo: ['orders@mulch.example'] });
      expect(sent.json().data.sentAt).toBeTruthy();
      const received = await member.call('POST', `/api/purchase-orders/${po.id}/receive`);
      expect(received.json().data.status).toBe('received');
    });
    expect(events.map((e) => e.type)).toEqual(['purchase-order.sent', 'purchase-order.received']);
    expect(await deliverMail(h)).toBe(1);
    expect(smtp.received.length).toBe(mailsBefore + 1);
    const mail = mailText(smtp.received.at(-1)?.raw ?? '');
    expect(mail).toContain(po.poNumber);
    expect(mail).toContain('Hardwood mulch');
    await expectRefused(h, owner, () => owner.call('PATCH', `/api/purchase-orders/${po.id}`, { notes: 'x' }), 409);
    await expectRefused(h, owner, () => owner.call('DELETE', `/api/purchase-orders/${po.id}`), 409);
    await expectRefused(h, owner, () => owner.call('POST', `/api/purchase-orders/${po.id}/cancel`), 409);
    await expectRefused(h, owner, () => member.call('POST', `/api/purchase-orders/${po.id}/bill`), 403);

    const billEvents = await eventsDuring(h, owner.organizationId, async () => {
      const bill = await owner.call('POST', `/api/purchase-orders/${po.id}/bill`);
      expect(bill.statusCode, bill.body).toBe(201);
      expect(bill.json().data).toMatchObject({ status: 'draft', total: 95.02, purchaseOrderId: po.id, vendorId: v.id });
      expect(bill.json().data.lineItems.map((l: { accountCode: string }) => l.accountCode)).toEqual(['5000', '5100']);
    });
    expect(billEvents.map((e) => e.type)).toEqual(['bill.created']);
    expect((await owner.call('GET', `/api/purchase-orders/${po.id}`)).json().data.billId).toBeTruthy();
    await expectRefused(h, owner, () => owner.call('POST', `/api/purchase-orders/${po.id}/bill`), 409);
  });

  it("a bill names only its own vendor's order of this organization (400 otherwise, nothing written)", async () => {
    const v = await newVendor(owner);
    const otherVendor = await newVendor(owner, { name: 'Other Mulch' });
    const po = (await owner.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems })).json().data;
    const stranger = await newTenant(h, { name: 'Stranger' });
    const foreignVendor = await newVendor(stranger);
    const foreignPo = (
      await stranger.call('POST', '/api/purchase-orders', { vendorId: foreignVendor.id, lineItems })
    ).json().data;
    const bill = (vendorId: string, purchaseOrderId: string) =>
      owner.call('POST', '/api/bills', {
        vendorId,
        purchaseOrderId,
        lineItems: [{ description: 'Mulch', amount: 10 }],
      });
    const billsNaming = async (purchaseOrderId: string) =>
      (await owner.call('GET', '/api/bills', undefined, { query: { purchaseOrderId } })).json().data;

    const otherVendors = await expectRefused(h, owner, () => bill(otherVendor.id, po.id), 400, 'purchaseOrderId');
    expect(otherVendors.body).toContain('the order belongs to another vendor');
    for (const missing of ['po_missing', foreignPo.id]) {
      const refused = await expectRefused(h, owner, () => bill(v.id, missing), 400, 'purchaseOrderId');
      expect(refused.body).toContain('no such purchase order in this organization');
    }
    // The vendor is checked first, as before any order.
    await expectRefused(h, owner, () => bill(foreignVendor.id, foreignPo.id), 400, 'vendorId');
    expect(await billsNaming(po.id)).toEqual([]);
    expect(await billsNaming(foreignPo.id)).toEqual([]);

    const ok = await bill(v.id, po.id);
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().data).toMatchObject({ vendorId: v.id, purchaseOrderId: po.id, status: 'open' });
  });

  it('deleting the draft bill made from an order lets the order be billed again', async () => {
    const v = await newVendor(owner);
    const po = (await owner.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems })).json().data;
    await owner.call('POST', `/api/purchase-orders/${po.id}/send`);
    expect((await owner.call('POST', `/api/purchase-orders/${po.id}/receive`)).json().data.status).toBe('received');
    const first = await owner.call('POST', `/api/purchase-orders/${po.id}/bill`);
    expect(first.statusCode, first.body).toBe(201);
    const draft = first.json().data;
    expect((await owner.call('GET', `/api/purchase-orders/${po.id}`)).json().data.billId).toBe(draft.id);
    await expectRefused(h, owner, () => owner.call('POST', `/api/purchase-orders/${po.id}/bill`), 409);

    expect((await owner.call('DELETE', `/api/bills/${draft.id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/bills/${draft.id}`)).statusCode).toBe(404);
    expect((await owner.call('GET', `/api/purchase-orders/${po.id}`)).json().data.billId).toBeNull();

    const again = await owner.call('POST', `/api/purchase-orders/${po.id}/bill`);
    expect(again.statusCode, again.body).toBe(201);
    expect(again.json().data).toMatchObject({ status: 'draft', purchaseOrderId: po.id, total: draft.total });
    expect(again.json().data.id).not.toBe(draft.id);
    expect((await owner.call('GET', `/api/purchase-orders/${po.id}`)).json().data.billId).toBe(again.json().data.id);
  });

  it('a vendor without email: sent without mail; a refused mail is retried, not refused', async () => {
    const quiet = await newVendor(owner);
    const po = (await owner.call('POST', '/api/purchase-orders', { vendorId: quiet.id, lineItems })).json().data;
    const sent = await owner.call('POST', `/api/purchase-orders/${po.id}/send`);
    expect(sent.json().data).toMatchObject({ status: 'sent', emailedTo: [] });

    const loud = await newVendor(owner, { email: 'x@vendor.example' });
    const po2 = (await owner.call('POST', '/api/purchase-orders', { vendorId: loud.id, lineItems })).json().data;
    await deliverMail(h);
    const before = smtp.received.length;
    smtp.state.refuse = true;
    try {
      const res = await owner.call('POST', `/api/purchase-orders/${po2.id}/send`);
      expect(res.statusCode, res.body).toBe(200);
      expect(await deliverMail(h)).toBe(1);
      expect(smtp.received.length).toBe(before);
    } finally {
      smtp.state.refuse = false;
    }
    expect((await owner.call('GET', `/api/purchase-orders/${po2.id}`)).json().data.status).toBe('sent');
    expect(await deliverMail(h, later())).toBe(1);
    expect(smtp.received.length).toBe(before + 1);
  });

  it('draft edits and delete; cancel from draft and sent', async () => {
    const v = await newVendor(owner);
    const po = (await owner.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems })).json().data;
    const edited = await owner.call('PATCH', `/api/purchase-orders/${po.id}`, {
      lineItems: [{ description: 'Soil', quantity: 3, unitCost: 10 }],
      expectedDate: '2099-01-01',
    });
    expect(edited.json().data).toMatchObject({ total: 30, expectedDate: '2099-01-01' });
    const cancelled = await eventsDuring(h, owner.organizationId, async () => {
      expect((await owner.call('POST', `/api/purchase-orders/${po.id}/cancel`)).json().data.status).toBe('cancelled');
    });
    expect(cancelled.map((e) => e.type)).toEqual(['purchase-order.cancelled']);
    await expectRefused(h, owner, () => owner.call('POST', `/api/purchase-orders/${po.id}/send`), 409);

    const po2 = (await owner.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems })).json().data;
    await owner.call('POST', `/api/purchase-orders/${po2.id}/send`);
    expect((await owner.call('POST', `/api/purchase-orders/${po2.id}/cancel`)).json().data.status).toBe('cancelled');

    const po3 = (await owner.call('POST', '/api/purchase-orders', { vendorId: v.id, lineItems })).json().data;
    expect((await owner.call('DELETE', `/api/purchase-orders/${po3.id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/purchase-orders/${po3.id}`)).statusCode).toBe(404);
    const list = await owner.call('GET', '/api/purchase-orders', undefined, {
      query: { status: 'cancelled', vendorId: v.id },
    });
    expect(
      list
        .json()
        .data.map((p: { id: string }) => p.id)
        .sort(),
    ).toEqual([po.id, po2.id].sort());
  });
});
