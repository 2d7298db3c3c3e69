import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { iifText } from '../../src/modules/ledger/ledger.journal-formats.js';
import { addDays, today } from '../../src/platform/dates.js';
import { createCustomer } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { newBill, newVendor, pay } from './helpers.js';

/*
 * The journal export (operations.md §11): each format parsed back must balance and, per
 * account, agree with the trial balance's movement over the same range.
 */

type Net = Map<string, number>;
const FORMATS = ['json', 'csv', 'iif', 'qbo', 'xero'] as const;
const cents = (s: string | number) => Math.round(Number(s === '' ? 0 : s) * 100);
const add = (net: Net, code: string, c: number) => net.set(code, (net.get(code) ?? 0) + c);
const nonZero = (net: Net) => new Map([...net].filter(([, v]) => v !== 0));
/** Sums per group key; every group must come to zero. */
const expectGroupsBalance = (groups: Map<string, number>, what: string) => {
  expect(groups.size, `${what}: at least one`).toBeGreaterThan(0);
  for (const [k, v] of groups) expect(v, `${what} ${k} balances`).toBe(0);
};

/** The per-account net (debit − credit, cents) a format says, checked to balance as it is read. */
function netOf(
  format: (typeof FORMATS)[number],
  body: string,
  byName: Map<string, string>,
  byCode: Map<string, string>,
) {
  const net: Net = new Map();
  const groups = new Map<string, number>();
  if (format === 'json') {
    const { entries } = JSON.parse(body).data as {
      entries: { id: string; lines: { accountCode: string; debit: number; credit: number }[] }[];
    };
    for (const e of entries) {
      for (const l of e.lines) {
        add(net, l.accountCode, cents(l.debit) - cents(l.credit));
        add(groups, e.id, cents(l.debit) - cents(l.credit));
      }
    }
  } else if (format === 'csv') {
    const rows = parse(body, { columns: true }) as Record<string, string>[];
    for (const r of rows) {
      const c = cents(r.debit as string) - cents(r.credit as string);
      add(net, r.accountCode as string, c);
      add(groups, r.entry as string, c);
    }
  } else if (format === 'qbo') {
    const rows = parse(body, { columns: true }) as Record<string, string>[];
    for (const r of rows) {
      expect(r['Journal Date']).toMatch(/^\d\d\/\d\d\/\d{4}$/);
      const c = cents(r.Debits as string) - cents(r.Credits as string);
      add(net, byName.get(r['Account Name'] as string) as string, c);
      add(groups, r['Journal No'] as string, c);
    }
  } else if (format === 'xero') {
    const rows = parse(body, { columns: true }) as Record<string, string>[];
    for (const r of rows) {
      const c = cents(r.Amount as string);
      add(net, byCode.get(r.AccountCode as string) as string, c);
      add(groups, `${r.Narration}|${r.Date}`, c);
    }
  } else {
    const rows = body.split('\r\n').filter((l) => l !== '');
    expect(rows.slice(0, 3).map((r) => r.split('\t')[0])).toEqual(['!TRNS', '!SPL', '!ENDTRNS']);
    let block = 0;
    let open = false;
    for (const line of rows.slice(3)) {
      const f = line.split('\t');
      if (f[0] === 'ENDTRNS') {
        expect(open).toBe(true);
        open = false;
        block++;
        continue;
      }
      expect(f[0]).toBe(open ? 'SPL' : 'TRNS');
      open = true;
      expect(f[2]).toBe('GENERAL JOURNAL');
      expect(f[3]).toMatch(/^\d\d\/\d\d\/\d{4}$/);
      add(net, byName.get(f[4] as string) as string, cents(f[5] as string));
      add(groups, String(block), cents(f[5] as string));
    }
    expect(open).toBe(false);
  }
  expectGroupsBalance(groups, `${format} entry`);
  return nonZero(net);
}

describe('ledger: journal export', () => {
  let h: Harness;
  let owner: TestUser;
  const todayDate = today('UTC');
  const lastWeek = addDays(todayDate, -7);

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: 'UTC' });
    const customer = await createCustomer(h, owner);
    // Entries over several days: invoices issued today, payments dated back, a bill, a bill
    // payment to a vendor whose name needs quoting, a refund and a void.
    for (const [i, daysAgo] of [6, 4, 2].entries()) {
      const inv = await owner.call('POST', '/api/invoices', {
        customerId: customer.id,
        invoiceDate: lastWeek,
        lineItems: [{ description: 'Mowing', quantity: 1, unitPrice: [100, 133.33, 166.67][i] }],
      });
      const id = inv.json().data.id as string;
      await owner.call('POST', `/api/invoices/${id}/send`);
      const paid = await owner.call('POST', `/api/invoices/${id}/payments`, {
        amount: 50.05,
        method: 'check',
        paymentDate: addDays(todayDate, -daysAgo),
      });
      expect(paid.statusCode, paid.body).toBe(201);
      const paymentId = paid.json().data.payments[0].id as string;
      if (i === 1)
        expect((await owner.call('POST', `/api/payments/${paymentId}/refunds`, { amount: 10 })).statusCode).toBe(201);
      if (i === 2) expect((await owner.call('POST', `/api/invoices/${id}/void`)).statusCode).toBe(200);
    }
    const vendor = await newVendor(owner, { name: 'Mulch, "Best"\tCo' });
    const bill = await newBill(owner, vendor.id, 80.4);
    expect((await pay(owner, vendor.id, [{ billId: bill.id, amount: 30 }])).statusCode).toBe(201);
  });
  afterAll(async () => h?.close());

  async function movement(from: string, to: string): Promise<Net> {
    const tb = async (asOf: string) =>
      (await owner.call('GET', '/api/ledger/trial-balance', undefined, { query: { asOf } })).json().data.accounts as {
        code: string;
        debit: number;
        credit: number;
      }[];
    const [end, start] = [await tb(to), await tb(addDays(from, -1))];
    const net: Net = new Map();
    for (const a of end) add(net, a.code, cents(a.debit) - cents(a.credit));
    for (const a of start) add(net, a.code, -(cents(a.debit) - cents(a.credit)));
    return nonZero(net);
  }

  async function accountMaps() {
    const accounts = (await owner.call('GET', '/api/ledger/accounts')).json().data as {
      code: string;
      name: string;
      externalName: string | null;
      externalCode: string | null;
    }[];
    return {
      // IIF cannot carry a tab or a double quote: it gets the name with those replaced.
      byName: new Map(
        accounts.flatMap((a) => [
          [a.externalName ?? a.name, a.code],
          [iifText(a.externalName ?? a.name), a.code],
        ]),
      ),
      byCode: new Map(accounts.map((a) => [a.externalCode ?? a.code, a.code])),
    };
  }

  const journal = (query: Record<string, string>) => owner.call('GET', '/api/ledger/journal', undefined, { query });

  for (const [label, fromDays, toDays] of [
    ['the whole week', 7, 0],
    ['a range that cuts the week', 5, 3],
  ] as const) {
    it(`${label}: every format balances and agrees with the trial balance per account`, async () => {
      const from = addDays(todayDate, -fromDays);
      const to = addDays(todayDate, -toDays);
      const expected = await movement(from, to);
      expect(expected.size).toBeGreaterThan(0);
      const { byName, byCode } = await accountMaps();
      for (const format of FORMATS) {
        const res = await journal({ from, to, format });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.headers['content-disposition']).toContain('attachment');
        expect(netOf(format, res.body, byName, byCode), format).toEqual(expected);
      }
    });
  }

  it('iif, qbo and xero use the names and codes set for the other system; csv keeps ours', async () => {
    const patched = await owner.call('PATCH', '/api/ledger/accounts/1000', {
      externalName: 'Checking, "Main"',
      externalCode: '090',
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data).toMatchObject({ code: '1000', externalName: 'Checking, "Main"', externalCode: '090' });
    const { byName, byCode } = await accountMaps();
    expect(byName.get('Checking, "Main"')).toBe('1000');
    const from = lastWeek;
    const expected = await movement(from, todayDate);
    for (const format of FORMATS) {
      const res = await journal({ from, to: todayDate, format });
      expect(netOf(format, res.body, byName, byCode), format).toEqual(expected);
    }
    expect((await journal({ from, to: todayDate, format: 'qbo' })).body).toContain('"Checking, ""Main"""');
    expect((await journal({ from, to: todayDate, format: 'iif' })).body).toContain("\tChecking, 'Main'\t");
    expect((await journal({ from, to: todayDate, format: 'xero' })).body).toContain(',090,');
    expect((await journal({ from, to: todayDate, format: 'csv' })).body).toContain(',1000,Cash,');
    // Back to ours.
    const cleared = await owner.call('PATCH', '/api/ledger/accounts/1000', { externalName: null, externalCode: '' });
    expect(cleared.json().data).toMatchObject({ externalName: null, externalCode: null });
    expect((await owner.call('PATCH', '/api/ledger/accounts/9999', { externalName: 'X' })).statusCode).toBe(404);
    expect((await owner.call('PATCH', '/api/ledger/accounts/1000', { name: 'X' })).statusCode).toBe(400);
  });

  it('bad input is a 400; a member may not export', async () => {
    const backwards = await journal({ from: todayDate, to: lastWeek });
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().error.details[0].field).toBe('to');
    expect((await journal({ from: lastWeek, to: todayDate, format: 'pdf' })).statusCode).toBe(400);
    expect((await journal({ from: 'last week', to: todayDate })).statusCode).toBe(400);
    expect((await journal({ to: todayDate })).statusCode).toBe(400);
    const member = await addMember(h, owner, 'member');
    expect(
      (await member.call('GET', '/api/ledger/journal', undefined, { query: { from: lastWeek, to: todayDate } }))
        .statusCode,
    ).toBe(403);
  });

  it('reads through the cursor in batches: entries split across fetches arrive whole and in order', async () => {
    const other = await newTenant(h, { timezone: 'UTC' });
    // 2,500 entries of 3 lines straight into the tables (7,500 rows: several fetches, entries across their edges).
    await h.admin.db.execute(sql`
      INSERT INTO ledger_entries (id, organization_id, entry_date, source_type, source_id, memo)
      SELECT 'jen_bulk' || lpad(g::text, 5, '0'), ${other.organizationId}, ${lastWeek}::date + (g % 7), 'invoice', 'inv_' || g, 'Bulk ' || g
      FROM generate_series(1, 2500) g`);
    await h.admin.db.execute(sql`
      INSERT INTO ledger_lines (id, organization_id, entry_id, position, account_code, debit_cents, credit_cents)
      SELECT 'jln_bulk' || lpad(g::text, 5, '0') || p, ${other.organizationId}, 'jen_bulk' || lpad(g::text, 5, '0'), p,
             (ARRAY['1100', '4000', '2100'])[p + 1],
             CASE WHEN p = 0 THEN g + 7 ELSE 0 END,
             CASE WHEN p = 1 THEN g WHEN p = 2 THEN 7 ELSE 0 END
      FROM generate_series(1, 2500) g, generate_series(0, 2) p`);
    const res = await other.call('GET', '/api/ledger/journal', undefined, {
      query: { from: lastWeek, to: todayDate, format: 'json' },
    });
    expect(res.statusCode).toBe(200);
    const entries = JSON.parse(res.body).data.entries as { entryDate: string; journalNo: string; lines: unknown[] }[];
    expect(entries).toHaveLength(2500);
    expect(entries.every((e) => e.lines.length === 3)).toBe(true);
    const keys = entries.map((e) => e.journalNo);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(2500);
    const csv = await other.call('GET', '/api/ledger/journal', undefined, {
      query: { from: lastWeek, to: todayDate, format: 'csv' },
    });
    expect((parse(csv.body, { columns: true }) as unknown[]).length).toBe(7500);

    // A download the client abandons half way ends its transaction: the organization's next
    // requests are answered (on PGlite, one connection, a transaction left open would hang them).
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = h.app.server.address() as AddressInfo;
    const abort = new AbortController();
    const streaming = await fetch(`http://127.0.0.1:${port}/api/ledger/journal?from=${lastWeek}&to=${todayDate}`, {
      headers: { cookie: other.cookie },
      signal: abort.signal,
    });
    const reader = (streaming.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).done).toBe(false);
    abort.abort();
    await reader.read().catch(() => undefined);
    if (process.env.TEST_DATABASE_URL) {
      for (;;) {
        const open = rowsOf<{ n: number }>(
          await h.admin.db.execute(
            sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`,
          ),
        );
        if (open[0]?.n === 0) break;
        await new Promise((r) => setImmediate(r));
      }
    }
    expect((await other.call('POST', '/api/ledger/close', { through: lastWeek })).statusCode).toBe(200);
    // The harness closes the app afterwards; a keep-alive socket of this fetch would hold that close.
    h.app.server.closeAllConnections();
  });
});
