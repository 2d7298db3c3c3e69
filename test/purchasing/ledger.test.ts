import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postEntry } from '../../src/modules/ledger/ledger.service.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { createCustomer, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { accountBalances, sideEffects } from './helpers.js';

type Line = { accountCode: string; debit: number; credit: number };

describe('ledger: receivables postings, entries, trial balance', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    await setSettings(h, owner.organizationId, { taxRate: 10 });
    customerId = (await createCustomer(h, owner)).id;
  });
  afterAll(async () => h?.close());

  const newInvoice = async (unitPrice = 100) =>
    (
      await owner.call('POST', '/api/invoices', {
        customerId,
        lineItems: [{ description: 'Mowing', quantity: 1, unitPrice }],
      })
    ).json().data as { id: string; total: number };

  const entriesOf = async (sourceId: string) =>
    (await owner.call('GET', '/api/ledger/entries', undefined, { query: { sourceId } })).json().data as {
      memo: string;
      sourceType: string;
      lines: Line[];
    }[];

  const delta = async (fn: () => Promise<unknown>) => {
    const before = await accountBalances(h, owner.organizationId);
    await fn();
    const after = await accountBalances(h, owner.organizationId);
    const out: Record<string, number> = {};
    for (const code of new Set([...before.keys(), ...after.keys()])) {
      const d = (after.get(code) ?? 0) - (before.get(code) ?? 0);
      if (d !== 0) out[code] = d;
    }
    return out;
  };

  it('the chart of accounts is fixed', async () => {
    const res = await owner.call('GET', '/api/ledger/accounts');
    expect(res.json().data.map((a: { code: string }) => a.code)).toEqual([
      '1000',
      '1100',
      '2000',
      '2100',
      '2300',
      '4000',
      '5000',
      '5100',
      '5200',
      '5900',
      '6900',
    ]);
    expect(res.json().data[0]).toEqual({
      code: '1000',
      name: 'Cash',
      type: 'asset',
      normalBalance: 'debit',
      externalName: null,
      externalCode: null,
    });
  });

  it('a draft invoice posts nothing; sending it posts Dr 1100 total, Cr 4000 subtotal, Cr 2100 tax', async () => {
    const inv = await newInvoice(100);
    expect(await entriesOf(inv.id)).toEqual([]);
    const d = await delta(() => owner.call('POST', `/api/invoices/${inv.id}/send`));
    expect(d).toEqual({ '1100': 11000, '4000': -10000, '2100': -1000 });
    // A resend posts nothing more.
    expect(await delta(() => owner.call('POST', `/api/invoices/${inv.id}/send`))).toEqual({});
    expect(await entriesOf(inv.id)).toHaveLength(1);
  });

  it('a payment posts Dr 1000, Cr 1100; a void then moves what was paid to 2300 and clears 1100', async () => {
    const inv = await newInvoice(100);
    await owner.call('POST', `/api/invoices/${inv.id}/send`);
    const paid = await delta(() =>
      owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 30, method: 'cash' }),
    );
    expect(paid).toEqual({ '1000': 3000, '1100': -3000 });
    const voided = await delta(() => owner.call('POST', `/api/invoices/${inv.id}/void`));
    expect(voided).toEqual({ '4000': 10000, '2100': 1000, '1100': -8000, '2300': -3000 });
  });

  it('a write-off moves the balance to 6900; voiding it later takes 6900 back', async () => {
    const inv = await newInvoice(200);
    await owner.call('POST', `/api/invoices/${inv.id}/send`);
    await owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 20, method: 'check' });
    const off = await delta(() => owner.call('POST', `/api/invoices/${inv.id}/write-off`));
    expect(off).toEqual({ '6900': 20000, '1100': -20000 });
    const voided = await delta(() => owner.call('POST', `/api/invoices/${inv.id}/void`));
    expect(voided).toEqual({ '4000': 20000, '2100': 2000, '6900': -20000, '2300': -2000 });
  });

  it('paid straight from draft: issued and paid in one transaction; a voided draft posts nothing', async () => {
    const inv = await newInvoice(100);
    const d = await delta(() =>
      owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 110, method: 'card' }),
    );
    expect(d).toEqual({ '1000': 11000, '4000': -10000, '2100': -1000 });
    expect((await entriesOf(inv.id)).map((e) => e.sourceType)).toEqual(['invoice']);
    const draft = await newInvoice(50);
    expect(await delta(() => owner.call('POST', `/api/invoices/${draft.id}/void`))).toEqual({});
  });

  it('a refused invoice change posts nothing', async () => {
    const inv = await newInvoice(100);
    await owner.call('POST', `/api/invoices/${inv.id}/send`);
    const before = await sideEffects(h, owner.organizationId);
    expect(
      (await owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 111, method: 'cash' })).statusCode,
    ).toBe(400);
    expect(await sideEffects(h, owner.organizationId)).toEqual(before);
  });

  it('entries list: filters by source and date, keyset pages, every entry balanced', async () => {
    const all = await owner.call('GET', '/api/ledger/entries', undefined, {
      query: { limit: '3', includeTotal: 'true' },
    });
    expect(all.statusCode).toBe(200);
    expect(all.json().data).toHaveLength(3);
    expect(all.headers.link).toContain('rel="next"');
    const total = Number(all.headers['x-total-count']);
    expect(total).toBeGreaterThan(3);
    const next = await owner.call('GET', '/api/ledger/entries', undefined, {
      query: { limit: '3', startingAfter: all.json().data[2].id },
    });
    expect(next.json().data[0].id).not.toBe(all.json().data[2].id);
    const payments = await owner.call('GET', '/api/ledger/entries', undefined, { query: { sourceType: 'payment' } });
    expect(payments.json().data.length).toBeGreaterThan(0);
    expect(payments.json().data.every((e: { sourceType: string }) => e.sourceType === 'payment')).toBe(true);
    const future = await owner.call('GET', '/api/ledger/entries', undefined, { query: { from: '2099-01-01' } });
    expect(future.json().data).toEqual([]);
    expect(
      (await owner.call('GET', '/api/ledger/entries', undefined, { query: { from: 'yesterday' } })).statusCode,
    ).toBe(400);
    for (const e of all.json().data as { lines: Line[] }[]) {
      const dr = e.lines.reduce((s, l) => s + Math.round(l.debit * 100), 0);
      const cr = e.lines.reduce((s, l) => s + Math.round(l.credit * 100), 0);
      expect(dr).toBe(cr);
    }
  });

  it('trial balance balances; asOf before any entry is all zero', async () => {
    const tb = (await owner.call('GET', '/api/ledger/trial-balance')).json().data;
    expect(tb.balanced).toBe(true);
    expect(tb.totalDebit).toBeGreaterThan(0);
    const past = (
      await owner.call('GET', '/api/ledger/trial-balance', undefined, { query: { asOf: '2000-01-01' } })
    ).json().data;
    expect(past).toMatchObject({ asOf: '2000-01-01', totalDebit: 0, totalCredit: 0, balanced: true });
    expect(
      (await owner.call('GET', '/api/ledger/trial-balance', undefined, { query: { asOf: '2026-02-30' } })).statusCode,
    ).toBe(400);
  });

  it('postEntry refuses an unbalanced entry and writes nothing', async () => {
    const before = await sideEffects(h, owner.organizationId);
    await expect(
      inTenant(h.database.db, owner.organizationId, { kind: 'system', id: 't', role: 'owner' }, (ctx) =>
        postEntry(ctx, {
          sourceType: 'refund',
          sourceId: 'x',
          memo: 'unbalanced',
          lines: [
            { accountCode: '1100', debit: 100 },
            { accountCode: '1000', credit: 99 },
          ],
        }),
      ),
    ).rejects.toThrow(/Unbalanced/);
    expect(await sideEffects(h, owner.organizationId)).toEqual(before);
  });
});
