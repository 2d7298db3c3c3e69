import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepDueBillPayments } from '../../src/modules/bill-payments/bill-payments.tasks.js';
import { addDays, today } from '../../src/platform/dates.js';
import { eventsDuring } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { accountBalances, expectRefused, newBill, newVendor, pay } from './helpers.js';

describe('bills and bill payments', () => {
  let h: Harness;
  let owner: TestUser;
  let member: TestUser;
  let vendorId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: 'America/Chicago' });
    member = await addMember(h, owner, 'member');
    vendorId = (await newVendor(owner, { paymentTermsDays: 10 })).id;
  });
  afterAll(async () => h?.close());

  it('records a posted bill: open, due by vendor terms, booked Dr expense lines / Cr 2000, bill.created once', async () => {
    const before = await accountBalances(h, owner.organizationId);
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const res = await owner.call('POST', '/api/bills', {
        vendorId,
        billDate: '2026-03-01',
        lineItems: [
          { description: 'Mulch', amount: 120.5 },
          { description: 'Mower blade', amount: 40, accountCode: '5100' },
        ],
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toMatchObject({
        status: 'open',
        dueDate: '2026-03-11',
        total: 160.5,
        balance: 160.5,
        amountPaid: 0,
      });
      expect(res.json().data.billNumber).toMatch(/^BILL-\d{6}$/);
    });
    expect(events.map((e) => e.type)).toEqual(['bill.created']);
    expect(events[0]?.data).toMatchObject({ vendorId, total: 160.5, balance: 160.5 });
    const after = await accountBalances(h, owner.organizationId);
    expect((after.get('5000') ?? 0) - (before.get('5000') ?? 0)).toBe(12050);
    expect((after.get('5100') ?? 0) - (before.get('5100') ?? 0)).toBe(4000);
    expect((after.get('2000') ?? 0) - (before.get('2000') ?? 0)).toBe(-16050);
  });

  it('a draft posts nothing until POST /post; numbers are gap-free', async () => {
    const a = await newBill(owner, vendorId, 10, { draft: true });
    const b = await newBill(owner, vendorId, 10, { draft: true });
    expect(Number(b.billNumber.slice(5))).toBe(Number(a.billNumber.slice(5)) + 1);
    expect(a.status).toBe('draft');
    const entries = await owner.call('GET', '/api/ledger/entries', undefined, { query: { sourceId: a.id } });
    expect(entries.json().data).toEqual([]);
    const posted = await owner.call('POST', `/api/bills/${a.id}/post`);
    expect(posted.json().data.status).toBe('open');
    const after = await owner.call('GET', '/api/ledger/entries', undefined, { query: { sourceId: a.id } });
    expect(after.json().data).toHaveLength(1);
    // Posting twice is refused.
    await expectRefused(h, owner, () => owner.call('POST', `/api/bills/${a.id}/post`), 409);
  });

  it('above the approval threshold waits for approval by owner/admin; approving anything else is refused', async () => {
    expect((await owner.call('PATCH', '/api/settings', { billApprovalThreshold: 1000 })).statusCode).toBe(200);
    try {
      const atThreshold = await newBill(owner, vendorId, 1000);
      expect(atThreshold.status).toBe('open');
      const big = await newBill(owner, vendorId, 1000.01);
      expect(big.status).toBe('awaiting_approval');
      expect(
        (await owner.call('GET', '/api/ledger/entries', undefined, { query: { sourceId: big.id } })).json().data,
      ).toEqual([]);
      await expectRefused(h, owner, () => member.call('POST', `/api/bills/${big.id}/approve`), 403);
      // Not payable while awaiting approval.
      await expectRefused(
        h,
        owner,
        () => pay(owner, vendorId, [{ billId: big.id, amount: 1 }]),
        400,
        'allocations[0].billId',
      );
      const approved = await owner.call('POST', `/api/bills/${big.id}/approve`);
      expect(approved.json().data).toMatchObject({ status: 'open' });
      expect(approved.json().data.approvedBy).toBeTruthy();
      expect(
        (await owner.call('GET', '/api/ledger/entries', undefined, { query: { sourceId: big.id } })).json().data,
      ).toHaveLength(1);
      await expectRefused(h, owner, () => owner.call('POST', `/api/bills/${big.id}/approve`), 409);
      await expectRefused(h, owner, () => owner.call('POST', `/api/bills/${atThreshold.id}/approve`), 409);
    } finally {
      await owner.call('PATCH', '/api/settings', { billApprovalThreshold: null });
    }
  });

  it('edits: everything in draft, only dueDate and notes once posted', async () => {
    const draft = await newBill(owner, vendorId, 50, { draft: true });
    const edited = await owner.call('PATCH', `/api/bills/${draft.id}`, {
      lineItems: [{ description: 'x', amount: 75 }],
    });
    expect(edited.json().data.total).toBe(75);
    const open = await newBill(owner, vendorId, 50);
    const refused = await expectRefused(
      h,
      owner,
      () => owner.call('PATCH', `/api/bills/${open.id}`, { lineItems: [{ description: 'x', amount: 1 }] }),
      409,
      'lineItems',
    );
    expect(refused.json()).toMatchObject({ error: { code: 'INVALID_STATE' } });
    const ok = await owner.call('PATCH', `/api/bills/${open.id}`, { notes: 'call first', dueDate: '2099-01-01' });
    expect(ok.json().data).toMatchObject({ notes: 'call first', dueDate: '2099-01-01', total: 50 });
    await expectRefused(h, owner, () => owner.call('DELETE', `/api/bills/${open.id}`), 409);
    expect((await owner.call('DELETE', `/api/bills/${draft.id}`)).statusCode).toBe(204);
  });

  it('bad bill input is a 400 naming the field, nothing written', async () => {
    const other = await newTenant(h, { name: 'Other' });
    const foreignVendor = await newVendor(other);
    await expectRefused(
      h,
      owner,
      () =>
        owner.call('POST', '/api/bills', { vendorId: foreignVendor.id, lineItems: [{ description: 'x', amount: 1 }] }),
      400,
      'vendorId',
    );
    await expectRefused(
      h,
      owner,
      () => owner.call('POST', '/api/bills', { vendorId, lineItems: [{ description: 'x', amount: 0 }] }),
      400,
      'lineItems[0].amount',
    );
    await expectRefused(
      h,
      owner,
      () => owner.call('POST', '/api/bills', { vendorId, lineItems: [{ description: 'x', amount: 1.005 }] }),
      400,
      'lineItems[0].amount',
    );
    await expectRefused(
      h,
      owner,
      () =>
        owner.call('POST', '/api/bills', {
          vendorId,
          lineItems: [{ description: 'x', amount: 1, accountCode: '4000' }],
        }),
      400,
      'accountCode',
    );
    await expectRefused(
      h,
      owner,
      () =>
        owner.call('POST', '/api/bills', {
          vendorId,
          billDate: '2026-05-02',
          dueDate: '2026-05-01',
          lineItems: [{ description: 'x', amount: 1 }],
        }),
      400,
      'dueDate',
    );
    await expectRefused(
      h,
      owner,
      () =>
        owner.call('POST', '/api/bills', { vendorId, status: 'paid', lineItems: [{ description: 'x', amount: 1 }] }),
      400,
    );
  });

  it('pays several bills of one vendor at once; partially_paid then paid with bill.paid once', async () => {
    const a = await newBill(owner, vendorId, 100);
    const b = await newBill(owner, vendorId, 40);
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const res = await pay(owner, vendorId, [
        { billId: a.id, amount: 60 },
        { billId: b.id, amount: 40 },
      ]);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toMatchObject({ status: 'pending', amount: 100 });
      expect(res.json().data.allocations).toHaveLength(2);
    });
    expect(events.map((e) => e.type)).toEqual(['bill_payment.created', 'bill.paid']);
    expect(events[0]?.data).toMatchObject({ amount: 100, billIds: [a.id, b.id], vendorId });
    expect(events[1]?.data).toMatchObject({ billId: b.id, balance: 0 });
    expect((await owner.call('GET', `/api/bills/${a.id}`)).json().data).toMatchObject({
      status: 'partially_paid',
      balance: 40,
    });
    const second = await pay(owner, vendorId, [{ billId: a.id, amount: 40 }]);
    expect(second.statusCode).toBe(201);
    expect((await owner.call('GET', `/api/bills/${a.id}`)).json().data.status).toBe('paid');
    // Failing the first payment reopens both bills: a back to partially_paid (40 still paid), b to open.
    const firstId = (await owner.call('GET', '/api/bill-payments', undefined, { query: { status: 'pending' } }))
      .json()
      .data.find((p: { amount: number }) => p.amount === 100).id;
    const failed = await owner.call('POST', `/api/bill-payments/${firstId}/fail`, { reason: 'stopped' });
    expect(failed.statusCode, failed.body).toBe(200);
    expect((await owner.call('GET', `/api/bills/${a.id}`)).json().data).toMatchObject({
      status: 'partially_paid',
      balance: 60,
      amountPaid: 40,
    });
    expect((await owner.call('GET', `/api/bills/${b.id}`)).json().data).toMatchObject({ status: 'open', balance: 40 });
    await expectRefused(
      h,
      owner,
      () => owner.call('POST', `/api/bill-payments/${firstId}/fail`, { reason: 'again' }),
      409,
    );
    await expectRefused(h, owner, () => owner.call('POST', `/api/bill-payments/${firstId}/settle`), 409);
  });

  it('refuses bad allocations with the field named, nothing written', async () => {
    const otherVendor = await newVendor(owner, { name: 'Other vendor' });
    const theirs = await newBill(owner, otherVendor.id, 10);
    const draft = await newBill(owner, vendorId, 10, { draft: true });
    const voided = await newBill(owner, vendorId, 10);
    await owner.call('POST', `/api/bills/${voided.id}/void`);
    const paid = await newBill(owner, vendorId, 10);
    expect((await pay(owner, vendorId, [{ billId: paid.id, amount: 10 }])).statusCode).toBe(201);
    const open = await newBill(owner, vendorId, 10);
    const cases: [unknown[], string][] = [
      [[{ billId: theirs.id, amount: 1 }], 'allocations[0].billId'],
      [[{ billId: draft.id, amount: 1 }], 'allocations[0].billId'],
      [[{ billId: voided.id, amount: 1 }], 'allocations[0].billId'],
      [[{ billId: paid.id, amount: 1 }], 'allocations[0].billId'],
      [[{ billId: open.id, amount: 10.01 }], 'allocations[0].amount'],
      [[{ billId: open.id, amount: 0 }], 'allocations[0].amount'],
      [[{ billId: 'bil_nope', amount: 1 }], 'allocations[0].billId'],
      [
        [
          { billId: open.id, amount: 1 },
          { billId: open.id, amount: 1 },
        ],
        'allocations[1].billId',
      ],
      [
        [
          { billId: open.id, amount: 5 },
          { billId: theirs.id, amount: 1 },
        ],
        'allocations[1].billId',
      ],
    ];
    for (const [allocations, field] of cases) {
      await expectRefused(
        h,
        owner,
        () => owner.call('POST', '/api/bill-payments', { vendorId, method: 'ach', allocations }),
        400,
        field,
      );
    }
    await expectRefused(
      h,
      owner,
      () =>
        owner.call('POST', '/api/bill-payments', {
          vendorId,
          method: 'wire',
          allocations: [{ billId: open.id, amount: 1 }],
        }),
      400,
      'method',
    );
    expect((await owner.call('GET', `/api/bills/${open.id}`)).json().data).toMatchObject({
      status: 'open',
      balance: 10,
    });
  });

  it('voids only an open bill with nothing paid, reversing its entry', async () => {
    const bill = await newBill(owner, vendorId, 25);
    const before = await accountBalances(h, owner.organizationId);
    const events = await eventsDuring(h, owner.organizationId, async () => {
      const res = await owner.call('POST', `/api/bills/${bill.id}/void`);
      expect(res.json().data).toMatchObject({ status: 'void', balance: 0 });
    });
    expect(events.map((e) => e.type)).toEqual(['bill.voided']);
    const after = await accountBalances(h, owner.organizationId);
    expect((after.get('2000') ?? 0) - (before.get('2000') ?? 0)).toBe(2500);
    expect((after.get('5000') ?? 0) - (before.get('5000') ?? 0)).toBe(-2500);
    await expectRefused(h, owner, () => owner.call('POST', `/api/bills/${bill.id}/void`), 409);

    const partly = await newBill(owner, vendorId, 25);
    expect((await pay(owner, vendorId, [{ billId: partly.id, amount: 5 }])).statusCode).toBe(201);
    await expectRefused(h, owner, () => owner.call('POST', `/api/bills/${partly.id}/void`), 409);
    const draft = await newBill(owner, vendorId, 25, { draft: true });
    await expectRefused(h, owner, () => owner.call('POST', `/api/bills/${draft.id}/void`), 409);
  });

  it('a payment dated after today is scheduled, booked at once, and made pending by the worker on its date', async () => {
    const bill = await newBill(owner, vendorId, 30);
    const tomorrow = addDays(today('America/Chicago'), 1);
    const res = await pay(owner, vendorId, [{ billId: bill.id, amount: 30 }], { paymentDate: tomorrow });
    expect(res.json().data).toMatchObject({ status: 'scheduled', paymentDate: tomorrow });
    const id = res.json().data.id;
    const entries = (await owner.call('GET', '/api/ledger/entries', undefined, { query: { sourceId: id } })).json()
      .data;
    expect(entries).toHaveLength(1);
    await expectRefused(h, owner, () => owner.call('POST', `/api/bill-payments/${id}/settle`), 409);

    await sweepDueBillPayments(h.database);
    expect((await owner.call('GET', `/api/bill-payments/${id}`)).json().data.status).toBe('scheduled');
    const dayAfter = new Date(Date.now() + 2 * 86_400_000);
    expect(await sweepDueBillPayments(h.database, dayAfter)).toBeGreaterThanOrEqual(1);
    expect((await owner.call('GET', `/api/bill-payments/${id}`)).json().data.status).toBe('pending');
    expect(await sweepDueBillPayments(h.database, dayAfter)).toBe(0);
    expect((await owner.call('POST', `/api/bill-payments/${id}/settle`)).json().data.status).toBe('settled');
  });

  it('a scheduled payment can fail before it is due', async () => {
    const bill = await newBill(owner, vendorId, 30);
    const res = await pay(owner, vendorId, [{ billId: bill.id, amount: 30 }], { paymentDate: '2099-01-01' });
    const failed = await owner.call('POST', `/api/bill-payments/${res.json().data.id}/fail`, { reason: 'cancelled' });
    expect(failed.json().data.status).toBe('failed');
    expect((await owner.call('GET', `/api/bills/${bill.id}`)).json().data).toMatchObject({
      status: 'open',
      balance: 30,
    });
  });

  it('lists filter by status and vendor', async () => {
    const list = await owner.call('GET', '/api/bills', undefined, { query: { status: 'void', includeTotal: 'true' } });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.every((b: { status: string }) => b.status === 'void')).toBe(true);
    expect(Number(list.headers['x-total-count'])).toBe(list.json().data.length);
    const page = await owner.call('GET', '/api/bills', undefined, { query: { limit: '2' } });
    expect(page.headers.link).toContain('rel="next"');
    const payments = await owner.call('GET', '/api/bill-payments', undefined, { query: { vendorId } });
    expect(payments.json().data.length).toBeGreaterThan(0);
  });
});
