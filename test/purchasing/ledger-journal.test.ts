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

  it('writes each format byte for byte: quoting (csv-stringify), IIF cleaning, amounts, journal numbers', async () => {
    // Entries straight into the tables, with what a format must quote or clean: commas, quotes,
    // tabs, line breaks, non-ASCII, an empty memo, a 3-line entry, a line of 0, cents past 2^32,
    // lines out of position order, three entries on one day (ranked by id), one outside the range.
    const tenant = await newTenant(h, { timezone: 'UTC' });
    const org = tenant.organizationId;
    const entries: [string, string, string, string, string][] = [
      ['jen_a1', '2025-03-01', 'invoice', 'inv_1', 'Plain memo'],
      ['jen_a2', '2025-03-01', 'payment', 'pay_1', 'Memo, with "quotes"\tand tab'],
      ['jen_a0', '2025-03-01', 'bill', 'bil_1', 'Line\r\nbreak and ünïcödé — 🌱'],
      ['jen_b1', '2025-03-02', 'refund', 'ref_1', ''],
      ['jen_c1', '2025-02-28', 'bill_payment', 'bpy_1', '  leading space, trailing  '],
      ['jen_d1', '2025-03-03', 'write_off', 'inv_9', 'Out of range'],
    ];
    for (const [id, day, sourceType, sourceId, memo] of entries) {
      await h.admin.db.execute(sql`
        INSERT INTO ledger_entries (id, organization_id, entry_date, source_type, source_id, memo)
        VALUES (${id}, ${org}, ${day}, ${sourceType}, ${sourceId}, ${memo})`);
    }
    const lines: [string, string, number, string, number, number][] = [
      ['jln_1', 'jen_a1', 0, '1100', 123456789012, 0],
      ['jln_2', 'jen_a1', 1, '4000', 0, 123456789000],
      ['jln_3', 'jen_a1', 2, '2100', 0, 12],
      ['jln_4', 'jen_a2', 0, '1000', 5005, 0],
      ['jln_5', 'jen_a2', 1, '1100', 0, 5005],
      ['jln_6', 'jen_a0', 1, '2000', 0, 8040],
      ['jln_7', 'jen_a0', 0, '5000', 8040, 0],
      ['jln_8', 'jen_b1', 0, '1100', 1, 0],
      ['jln_9', 'jen_b1', 1, '1000', 0, 1],
      ['jln_10', 'jen_c1', 0, '2000', 100, 0],
      ['jln_11', 'jen_c1', 1, '1000', 0, 100],
      ['jln_12', 'jen_c1', 2, '2300', 0, 0],
      ['jln_13', 'jen_d1', 0, '6900', 7, 0],
      ['jln_14', 'jen_d1', 1, '1100', 0, 7],
    ];
    for (const [id, entryId, position, code, debit, credit] of lines) {
      await h.admin.db.execute(sql`
        INSERT INTO ledger_lines (id, organization_id, entry_id, position, account_code, debit_cents, credit_cents)
        VALUES (${id}, ${org}, ${entryId}, ${position}, ${code}, ${debit}, ${credit})`);
    }
    const names = [
      ['1000', { externalName: 'Checking, "Main"\tUS', externalCode: '090' }],
      ['4000', { externalName: 'Sales\nIncome' }],
      ['2100', { externalCode: 'TAX,1' }],
    ] as const;
    for (const [code, body] of names) {
      expect((await tenant.call('PATCH', `/api/ledger/accounts/${code}`, body)).statusCode).toBe(200);
    }
    const expected: Record<(typeof FORMATS)[number], string> = {
      json: '{"data":{"from":"2025-02-28","to":"2025-03-02","entries":[{"id":"jen_c1","journalNo":"20250228-0001","entryDate":"2025-02-28","sourceType":"bill_payment","sourceId":"bpy_1","memo":"  leading space, trailing  ","lines":[{"accountCode":"2000","accountName":"Accounts Payable","debit":1,"credit":0},{"accountCode":"1000","accountName":"Cash","debit":0,"credit":1},{"accountCode":"2300","accountName":"Customer Credits","debit":0,"credit":0}]},{"id":"jen_a0","journalNo":"20250301-0001","entryDate":"2025-03-01","sourceType":"bill","sourceId":"bil_1","memo":"Line\\r\\nbreak and ünïcödé — 🌱","lines":[{"accountCode":"5000","accountName":"Materials and Supplies","debit":80.4,"credit":0},{"accountCode":"2000","accountName":"Accounts Payable","debit":0,"credit":80.4}]},{"id":"jen_a1","journalNo":"20250301-0002","entryDate":"2025-03-01","sourceType":"invoice","sourceId":"inv_1","memo":"Plain memo","lines":[{"accountCode":"1100","accountName":"Accounts Receivable","debit":1234567890.12,"credit":0},{"accountCode":"4000","accountName":"Service Revenue","debit":0,"credit":1234567890},{"accountCode":"2100","accountName":"Sales Tax Payable","debit":0,"credit":0.12}]},{"id":"jen_a2","journalNo":"20250301-0003","entryDate":"2025-03-01","sourceType":"payment","sourceId":"pay_1","memo":"Memo, with \\"quotes\\"\\tand tab","lines":[{"accountCode":"1000","accountName":"Cash","debit":50.05,"credit":0},{"accountCode":"1100","accountName":"Accounts Receivable","debit":0,"credit":50.05}]},{"id":"jen_b1","journalNo":"20250302-0001","entryDate":"2025-03-02","sourceType":"refund","sourceId":"ref_1","memo":"","lines":[{"accountCode":"1100","accountName":"Accounts Receivable","debit":0.01,"credit":0},{"accountCode":"1000","accountName":"Cash","debit":0,"credit":0.01}]}]}}\n',
      csv: 'date,entry,source,accountCode,accountName,debit,credit,description\n2025-02-28,jen_c1,bill_payment bpy_1,2000,Accounts Payable,1.00,,"  leading space, trailing  "\n2025-02-28,jen_c1,bill_payment bpy_1,1000,Cash,,1.00,"  leading space, trailing  "\n2025-02-28,jen_c1,bill_payment bpy_1,2300,Customer Credits,,,"  leading space, trailing  "\n2025-03-01,jen_a0,bill bil_1,5000,Materials and Supplies,80.40,,"Line\r\nbreak and ünïcödé — 🌱"\n2025-03-01,jen_a0,bill bil_1,2000,Accounts Payable,,80.40,"Line\r\nbreak and ünïcödé — 🌱"\n2025-03-01,jen_a1,invoice inv_1,1100,Accounts Receivable,1234567890.12,,Plain memo\n2025-03-01,jen_a1,invoice inv_1,4000,Service Revenue,,1234567890.00,Plain memo\n2025-03-01,jen_a1,invoice inv_1,2100,Sales Tax Payable,,0.12,Plain memo\n2025-03-01,jen_a2,payment pay_1,1000,Cash,50.05,,"Memo, with ""quotes""\tand tab"\n2025-03-01,jen_a2,payment pay_1,1100,Accounts Receivable,,50.05,"Memo, with ""quotes""\tand tab"\n2025-03-02,jen_b1,refund ref_1,1100,Accounts Receivable,0.01,,\n2025-03-02,jen_b1,refund ref_1,1000,Cash,,0.01,\n',
      iif: "!TRNS\tTRNSID\tTRNSTYPE\tDATE\tACCNT\tAMOUNT\tDOCNUM\tMEMO\r\n!SPL\tSPLID\tTRNSTYPE\tDATE\tACCNT\tAMOUNT\tDOCNUM\tMEMO\r\n!ENDTRNS\r\nTRNS\t\tGENERAL JOURNAL\t02/28/2025\tAccounts Payable\t1.00\t20250228-0001\t  leading space, trailing  \r\nSPL\t\tGENERAL JOURNAL\t02/28/2025\tChecking, 'Main' US\t-1.00\t20250228-0001\t  leading space, trailing  \r\nSPL\t\tGENERAL JOURNAL\t02/28/2025\tCustomer Credits\t0.00\t20250228-0001\t  leading space, trailing  \r\nENDTRNS\r\nTRNS\t\tGENERAL JOURNAL\t03/01/2025\tMaterials and Supplies\t80.40\t20250301-0001\tLine break and ünïcödé — 🌱\r\nSPL\t\tGENERAL JOURNAL\t03/01/2025\tAccounts Payable\t-80.40\t20250301-0001\tLine break and ünïcödé — 🌱\r\nENDTRNS\r\nTRNS\t\tGENERAL JOURNAL\t03/01/2025\tAccounts Receivable\t1234567890.12\t20250301-0002\tPlain memo\r\nSPL\t\tGENERAL JOURNAL\t03/01/2025\tSales Income\t-1234567890.00\t20250301-0002\tPlain memo\r\nSPL\t\tGENERAL JOURNAL\t03/01/2025\tSales Tax Payable\t-0.12\t20250301-0002\tPlain memo\r\nENDTRNS\r\nTRNS\t\tGENERAL JOURNAL\t03/01/2025\tChecking, 'Main' US\t50.05\t20250301-0003\tMemo, with 'quotes' and tab\r\nSPL\t\tGENERAL JOURNAL\t03/01/2025\tAccounts Receivable\t-50.05\t20250301-0003\tMemo, with 'quotes' and tab\r\nENDTRNS\r\nTRNS\t\tGENERAL JOURNAL\t03/02/2025\tAccounts Receivable\t0.01\t20250302-0001\t\r\nSPL\t\tGENERAL JOURNAL\t03/02/2025\tChecking, 'Main' US\t-0.01\t20250302-0001\t\r\nENDTRNS\r\n",
      qbo: 'Journal No,Journal Date,Account Name,Debits,Credits,Description,Name\n20250228-0001,02/28/2025,Accounts Payable,1.00,,"  leading space, trailing  ",\n20250228-0001,02/28/2025,"Checking, ""Main""\tUS",,1.00,"  leading space, trailing  ",\n20250228-0001,02/28/2025,Customer Credits,,,"  leading space, trailing  ",\n20250301-0001,03/01/2025,Materials and Supplies,80.40,,"Line\r\nbreak and ünïcödé — 🌱",\n20250301-0001,03/01/2025,Accounts Payable,,80.40,"Line\r\nbreak and ünïcödé — 🌱",\n20250301-0002,03/01/2025,Accounts Receivable,1234567890.12,,Plain memo,\n20250301-0002,03/01/2025,"Sales\nIncome",,1234567890.00,Plain memo,\n20250301-0002,03/01/2025,Sales Tax Payable,,0.12,Plain memo,\n20250301-0003,03/01/2025,"Checking, ""Main""\tUS",50.05,,"Memo, with ""quotes""\tand tab",\n20250301-0003,03/01/2025,Accounts Receivable,,50.05,"Memo, with ""quotes""\tand tab",\n20250302-0001,03/02/2025,Accounts Receivable,0.01,,,\n20250302-0001,03/02/2025,"Checking, ""Main""\tUS",,0.01,,\n',
      xero: 'Narration,Date,Description,AccountCode,TaxRate,Amount\n"20250228-0001   leading space, trailing  ",02/28/2025,"  leading space, trailing  ",2000,Tax Exempt,1.00\n"20250228-0001   leading space, trailing  ",02/28/2025,"  leading space, trailing  ",090,Tax Exempt,-1.00\n"20250228-0001   leading space, trailing  ",02/28/2025,"  leading space, trailing  ",2300,Tax Exempt,0.00\n"20250301-0001 Line\r\nbreak and ünïcödé — 🌱",03/01/2025,"Line\r\nbreak and ünïcödé — 🌱",5000,Tax Exempt,80.40\n"20250301-0001 Line\r\nbreak and ünïcödé — 🌱",03/01/2025,"Line\r\nbreak and ünïcödé — 🌱",2000,Tax Exempt,-80.40\n20250301-0002 Plain memo,03/01/2025,Plain memo,1100,Tax Exempt,1234567890.12\n20250301-0002 Plain memo,03/01/2025,Plain memo,4000,Tax Exempt,-1234567890.00\n20250301-0002 Plain memo,03/01/2025,Plain memo,"TAX,1",Tax Exempt,-0.12\n"20250301-0003 Memo, with ""quotes""\tand tab",03/01/2025,"Memo, with ""quotes""\tand tab",090,Tax Exempt,50.05\n"20250301-0003 Memo, with ""quotes""\tand tab",03/01/2025,"Memo, with ""quotes""\tand tab",1100,Tax Exempt,-50.05\n20250302-0001 ,03/02/2025,,1100,Tax Exempt,0.01\n20250302-0001 ,03/02/2025,,090,Tax Exempt,-0.01\n',
    };
    const heads = {
      json: '{"data":{"from":"2024-01-01","to":"2024-01-02","entries":[]}}\n',
      csv: 'date,entry,source,accountCode,accountName,debit,credit,description\n',
      iif: '!TRNS\tTRNSID\tTRNSTYPE\tDATE\tACCNT\tAMOUNT\tDOCNUM\tMEMO\r\n!SPL\tSPLID\tTRNSTYPE\tDATE\tACCNT\tAMOUNT\tDOCNUM\tMEMO\r\n!ENDTRNS\r\n',
      qbo: 'Journal No,Journal Date,Account Name,Debits,Credits,Description,Name\n',
      xero: 'Narration,Date,Description,AccountCode,TaxRate,Amount\n',
    };
    for (const format of FORMATS) {
      const res = await tenant.call('GET', '/api/ledger/journal', undefined, {
        query: { from: '2025-02-28', to: '2025-03-02', format },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body, format).toBe(expected[format]);
      // Nothing in the range: the format's frame alone.
      const empty = await tenant.call('GET', '/api/ledger/journal', undefined, {
        query: { from: '2024-01-01', to: '2024-01-02', format },
      });
      expect(empty.body, `${format}, empty`).toBe(heads[format]);
    }
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
