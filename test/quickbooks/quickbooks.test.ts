import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { rowsOf } from '../../src/db/client.js';
import { quickbooksConnections, quickbooksSyncJobs } from '../../src/db/schema/index.js';
import { makeSyncDeps, type SyncDeps } from '../../src/modules/quickbooks/quickbooks.deps.js';
import { itemName } from '../../src/modules/quickbooks/quickbooks.items.js';
import { MAX_ATTEMPTS } from '../../src/modules/quickbooks/quickbooks.jobs.js';
import { readState, signState } from '../../src/modules/quickbooks/quickbooks.oauth.js';
import { syncJobs } from '../../src/modules/quickbooks/quickbooks.sync.js';
import { SecretBox } from '../../src/platform/secrets.js';
import { addMember, createHarness, type Harness, newTenant, TEST_ENV, type TestUser } from '../harness.js';
import { feedAll } from './feed-all.js';
import { type QboStandIn, startQboStandIn } from './quickbooks-stand-in.js';

/*
 * QuickBooks Online sync (operations.md §11) against a local stand-in of Intuit's OAuth
 * endpoints and v3 API: connect and its refusals, what syncs, and the faults — an expired
 * token, 429, 5xx, answers lost after the write, a duplicate DocNumber, a closed period, a third
 * of the requests failing, two workers at once — after which each record is there exactly once.
 */

let h: Harness;
let qbo: QboStandIn;
let deps: SyncDeps;
let realms = 0;
/** Realm ids of this run: the shared budget's counters (rate_limits) outlive a run on a kept database. */
const REALM_BASE = 9_000_000_000 + Math.floor(Math.random() * 900_000_000);
/** The workers' clock: each pass an hour on, past every backoff. */
let clock = Date.now();
const later = () => {
  clock += 3_600_000;
  return new Date(clock);
};

beforeAll(async () => {
  qbo = await startQboStandIn();
  h = await createHarness(qbo.env);
  deps = makeSyncDeps(h.config, h.database);
});
afterAll(async () => {
  await h?.close();
  await qbo?.close();
});
beforeEach(() => {
  qbo.script.length = 0;
  qbo.failEvery = 0;
});

/** Feed and sync passes until nothing is due (bounded). */
async function syncAll(passes = 60) {
  for (let i = 0; i < passes; i++) {
    await feedAll(h);
    const synced = await syncJobs(h.database, deps, { now: later() });
    if (synced === 0) return;
  }
  throw new Error('the sync did not settle');
}

const base = '/api/integrations/quickbooks';

/** An organization connected to a fresh QuickBooks company of the stand-in. */
async function connected(user?: TestUser): Promise<{ owner: TestUser; realm: string }> {
  const owner = user ?? (await newTenant(h, { name: 'Green Acres' }));
  const realm = `${REALM_BASE + ++realms}`;
  const start = await owner.call('POST', `${base}/connect`);
  expect(start.statusCode, start.body).toBe(200);
  const state = new URL(start.json().data.authorizeUrl).searchParams.get('state') as string;
  const code = `code-${realm}`;
  qbo.codes.set(code, realm);
  const back = await owner.call('GET', `${base}/callback`, undefined, { query: { code, state, realmId: realm } });
  expect(back.statusCode, back.body).toBe(200);
  expect(back.json().data).toMatchObject({ status: 'connected', realmId: realm });
  return { owner, realm };
}

async function customer(owner: TestUser, firstName = 'Dana', lastName = 'Lee') {
  const res = await owner.call('POST', '/api/customers', {
    firstName,
    lastName,
    email: `${firstName.toLowerCase()}.${Math.random().toString(36).slice(2)}@example.com`,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as string;
}

async function sentInvoice(owner: TestUser, customerId: string, invoiceDate?: string) {
  const res = await owner.call('POST', '/api/invoices', {
    customerId,
    ...(invoiceDate ? { invoiceDate } : {}),
    lineItems: [
      { description: 'Spring cleanup', quantity: 2, unitPrice: 45.5 },
      { description: 'Mulch', quantity: 1, unitPrice: 19.99 },
    ],
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().data.id as string;
  const sent = await owner.call('POST', `/api/invoices/${id}/send`);
  expect(sent.statusCode, sent.body).toBe(200);
  return sent.json().data as { id: string; invoiceNumber: string; total: number; tax: number };
}

async function pay(owner: TestUser, invoiceId: string, amount: number) {
  const res = await owner.call('POST', `/api/invoices/${invoiceId}/payments`, { amount, method: 'check' });
  expect(res.statusCode, res.body).toBe(201);
}

const failed = async (owner: TestUser) =>
  (await owner.call('GET', `${base}/records`, undefined, { query: { status: 'failed' } })).json().data as Array<{
    id: string;
    entityId: string;
    error: string;
    errorCode: string;
  }>;

describe('connecting', () => {
  it('hands out an Intuit authorize URL with a signed state, owner and admin only', async () => {
    const owner = await newTenant(h);
    const res = await owner.call('POST', `${base}/connect`);
    expect(res.statusCode, res.body).toBe(200);
    const url = new URL(res.json().data.authorizeUrl);
    expect(url.origin + url.pathname).toBe(`${qbo.env.QUICKBOOKS_OAUTH_BASE}/connect/oauth2`);
    expect(url.searchParams.get('client_id')).toBe(qbo.clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(`${h.config.baseUrl}/api/integrations/quickbooks/callback`);
    expect(url.searchParams.get('scope')).toBe('com.intuit.quickbooks.accounting');
    expect(readState(h.config, url.searchParams.get('state') as string)).toMatchObject({
      ok: true,
      organizationId: owner.organizationId,
      userId: owner.userId,
    });
    const admin = await addMember(h, owner, 'admin');
    expect((await admin.call('POST', `${base}/connect`)).statusCode).toBe(200);
    const member = await addMember(h, owner, 'member');
    expect((await member.call('POST', `${base}/connect`)).statusCode).toBe(403);
    expect((await member.call('GET', base)).statusCode).toBe(403);
    expect((await owner.call('GET', base)).json().data).toMatchObject({ status: 'disconnected', realmId: null });
  });

  it("sends an owner's browser back from Intuit to the console's Books page, a program gets JSON", async () => {
    const owner = await newTenant(h);
    const realm = `${REALM_BASE + ++realms}`;
    const start = await owner.call('POST', `${base}/connect`);
    const state = new URL(start.json().data.authorizeUrl).searchParams.get('state') as string;
    qbo.codes.set(`code-${realm}`, realm);
    const back = await owner.call('GET', `${base}/callback`, undefined, {
      query: { code: `code-${realm}`, state, realmId: realm },
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(back.statusCode, back.body).toBe(303);
    expect(back.headers.location).toBe('/app/books');
    expect((await owner.call('GET', base)).json().data).toMatchObject({ status: 'connected', realmId: realm });
  });

  it('refuses a forged, expired or foreign state, and an unknown code, writing nothing', async () => {
    const owner = await newTenant(h);
    const other = await newTenant(h);
    qbo.codes.set('c-1', '9000000001');
    const tries: Array<[string, number, string]> = [
      ['not-a-state', 400, 'not issued'],
      [`${signState(h.config, owner.organizationId, owner.userId).split('.')[0]}.AAAA`, 400, 'not issued'],
      [signState(h.config, owner.organizationId, owner.userId, Date.now() - 11 * 60_000), 400, 'expired'],
      [
        signState(loadConfig({ ...TEST_ENV, AUTH_SECRET: 'x'.repeat(40) }), owner.organizationId, owner.userId),
        400,
        'not issued',
      ],
      [signState(h.config, other.organizationId, other.userId), 403, 'another organization'],
    ];
    for (const [state, status, text] of tries) {
      const res = await owner.call('GET', `${base}/callback`, undefined, {
        query: { code: 'c-1', state, realmId: '9000000001' },
      });
      expect(res.statusCode, state).toBe(status);
      expect(res.json().error.message).toContain(text);
    }
    const good = signState(h.config, owner.organizationId, owner.userId);
    const unknownCode = await owner.call('GET', `${base}/callback`, undefined, {
      query: { code: 'no-such-code', state: good, realmId: '9000000001' },
    });
    expect(unknownCode.statusCode, unknownCode.body).toBe(409);
    expect(unknownCode.json().error.message).toContain('invalid_grant');
    const missing = await owner.call('GET', `${base}/callback`, undefined, { query: { state: good } });
    expect(missing.statusCode).toBe(400);
    const rows = await h.admin.db
      .select()
      .from(quickbooksConnections)
      .where(eq(quickbooksConnections.organizationId, owner.organizationId));
    expect(rows).toEqual([]);
  });

  it('without the app keys, connect says what to set (409)', async () => {
    const { oauthClient } = await import('../../src/modules/quickbooks/quickbooks.oauth.js');
    expect(() => oauthClient(loadConfig(TEST_ENV))).toThrow(/QUICKBOOKS_CLIENT_ID/);
  });

  it('stores the tokens sealed; disconnect revokes at Intuit and stops the sync', async () => {
    const { owner, realm } = await connected();
    const [row] = await h.admin.db
      .select()
      .from(quickbooksConnections)
      .where(eq(quickbooksConnections.organizationId, owner.organizationId));
    expect(row?.realmId).toBe(realm);
    expect(row?.accessTokenSealed).not.toMatch(/^at-/);
    const refreshToken = new SecretBox(h.config.authSecret).open(row?.refreshTokenSealed as string);
    expect(refreshToken).toMatch(/^rt-/);
    const off = await owner.call('POST', `${base}/disconnect`);
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().data).toMatchObject({ status: 'disconnected', realmId: null });
    expect(qbo.revoked).toContain(refreshToken);
    await customer(owner);
    await syncAll();
    expect(qbo.list(realm, 'Customer')).toEqual([]);
  });
});

describe('syncing', () => {
  it('sends customers, invoices and payments once, older ones included, and updates with SyncToken', async () => {
    const owner = await newTenant(h);
    const before = await customer(owner, 'Early', 'Bird');
    const { realm } = await connected(owner);
    const cus = await customer(owner, 'Dana', 'Lee');
    const inv = await sentInvoice(owner, cus);
    await pay(owner, inv.id, 50);
    await syncAll();

    const customers = qbo.list(realm, 'Customer');
    expect(customers.map((c) => c.DisplayName).sort()).toEqual(['Dana Lee', 'Early Bird']);
    const [invoice, ...moreInvoices] = qbo.list(realm, 'Invoice');
    expect(moreInvoices).toEqual([]);
    const dana = customers.find((c) => c.DisplayName === 'Dana Lee');
    expect(invoice).toMatchObject({
      DocNumber: inv.invoiceNumber,
      CustomerRef: { value: dana?.Id },
      TxnTaxDetail: { TotalTax: inv.tax },
    });
    expect(invoice?.Line).toHaveLength(2);
    expect(qbo.list(realm, 'Item').map((i) => i.Name)).toEqual(['Services']);
    const [payment, ...morePayments] = qbo.list(realm, 'Payment');
    expect(morePayments).toEqual([]);
    expect(payment).toMatchObject({
      TotalAmt: 50,
      CustomerRef: { value: dana?.Id },
      Line: [{ Amount: 50, LinkedTxn: [{ TxnId: invoice?.Id, TxnType: 'Invoice' }] }],
    });
    // every create carried a requestid
    expect(qbo.v3Requests.filter((r) => r.method === 'POST' && !r.requestid)).toEqual([]);

    const edit = await owner.call('PATCH', `/api/customers/${before}`, { lastName: 'Worm' });
    expect(edit.statusCode, edit.body).toBe(200);
    await syncAll();
    const after = qbo.list(realm, 'Customer');
    expect(after).toHaveLength(2);
    expect(after.find((c) => c.FamilyName === 'Worm')).toMatchObject({ DisplayName: 'Early Worm', SyncToken: '1' });

    const status = (await owner.call('GET', base)).json().data;
    expect(status).toMatchObject({ status: 'connected', realmId: realm, pending: 0, failing: 0 });
    expect(status.lastSyncAt).not.toBeNull();
  });

  it('a 401 refreshes the token once (rotated) and goes on; 429 and 5xx are retried, lost answers not duplicated', async () => {
    const { owner, realm } = await connected();
    const refreshesBefore = qbo.tokenCalls.filter((t) => t.grantType === 'refresh_token').length;
    qbo.expireAccessTokens();
    qbo.script.push(
      { status: 429, retryAfter: '0' },
      { status: 503 },
      { status: 'lost' },
      { status: 502 },
      { status: 'lost' },
    );
    const ids = [await customer(owner, 'Ann'), await customer(owner, 'Bob')];
    await syncAll();
    expect(qbo.tokenCalls.filter((t) => t.grantType === 'refresh_token').length - refreshesBefore).toBe(1);
    expect(
      qbo
        .list(realm, 'Customer')
        .map((c) => c.GivenName)
        .sort(),
    ).toEqual(['Ann', 'Bob']);
    const records = (await owner.call('GET', `${base}/records`)).json().data as Array<{
      entityId: string;
      status: string;
    }>;
    expect(records.filter((r) => ids.includes(r.entityId)).map((r) => r.status)).toEqual(['done', 'done']);
  });

  it('keeps QuickBooks’ Fault text on a failed record (duplicate DocNumber, closed period) and retries on request', async () => {
    const { owner, realm } = await connected();
    const cus = await customer(owner);
    await syncAll();
    // someone typed our next invoice number in QuickBooks by hand
    const next = (
      await owner.call('POST', '/api/invoices', {
        customerId: cus,
        lineItems: [{ description: 'x', quantity: 1, unitPrice: 1 }],
      })
    ).json().data;
    await owner.call('DELETE', `/api/invoices/${next.id}`);
    const clash = { Id: '999999', SyncToken: '0', DocNumber: '' };
    const inv = await sentInvoice(owner, cus);
    clash.DocNumber = inv.invoiceNumber;
    qbo.companies.get(realm)?.get('Invoice')?.set(clash.Id, clash);
    qbo.closedThrough.set(realm, '2000-01-31');
    const old = await sentInvoice(owner, cus, '2000-01-15');
    await syncAll();

    const list = await failed(owner);
    expect(list.map((r) => r.entityId).sort()).toEqual([inv.id, old.id].sort());
    const dup = list.find((r) => r.entityId === inv.id);
    expect(dup).toMatchObject({ errorCode: '6140' });
    expect(dup?.error).toContain('Duplicate Document Number Error');
    const closed = list.find((r) => r.entityId === old.id);
    expect(closed).toMatchObject({ errorCode: '6210' });
    expect(closed?.error).toContain('The account period has closed');
    expect((await owner.call('GET', base)).json().data.failing).toBe(2);

    // a record that is not failed, or of another organization, cannot be retried
    const stranger = await newTenant(h);
    expect((await stranger.call('POST', `${base}/records/${closed?.id}/retry`)).statusCode).toBe(404);

    qbo.companies.get(realm)?.get('Invoice')?.delete(clash.Id);
    qbo.closedThrough.delete(realm);
    for (const r of list) {
      const res = await owner.call('POST', `${base}/records/${r.id}/retry`);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.status).toBe('pending');
    }
    expect((await owner.call('POST', `${base}/records/${list[0]?.id}/retry`)).statusCode).toBe(409);
    await syncAll();
    expect(await failed(owner)).toEqual([]);
    expect(
      qbo
        .list(realm, 'Invoice')
        .map((i) => i.DocNumber)
        .sort(),
    ).toEqual([inv.invoiceNumber, old.invoiceNumber].sort());
  });

  it('with a third of the requests failing, every record is there exactly once', async () => {
    const { owner, realm } = await connected();
    const invoices: string[] = [];
    for (let i = 0; i < 6; i++) {
      const cus = await customer(owner, `Flaky${i}`);
      const inv = await sentInvoice(owner, cus);
      await pay(owner, inv.id, 10 + i);
      invoices.push(inv.invoiceNumber);
    }
    qbo.failEvery = 3;
    await syncAll(200);
    qbo.failEvery = 0;
    expect(await failed(owner)).toEqual([]);
    expect(qbo.list(realm, 'Customer')).toHaveLength(6);
    expect(
      qbo
        .list(realm, 'Invoice')
        .map((i) => i.DocNumber)
        .sort(),
    ).toEqual(invoices.sort());
    expect(
      qbo
        .list(realm, 'Payment')
        .map((p) => p.TotalAmt)
        .sort(),
    ).toEqual([10, 11, 12, 13, 14, 15]);
  });

  it('two workers syncing the same records at once: each record is written by one', async () => {
    const { owner, realm } = await connected();
    for (let i = 0; i < 5; i++) await customer(owner, `Twin${i}`);
    await feedAll(h);
    await h.admin.db.execute(sql`UPDATE quickbooks_connections SET feed_tx = 0, feed_event_id = ''`);
    await feedAll(h); // a second feed over the same events makes nothing twice
    const jobs = await h.admin.db
      .select()
      .from(quickbooksSyncJobs)
      .where(eq(quickbooksSyncJobs.organizationId, owner.organizationId));
    expect(jobs).toHaveLength(5);
    const other: SyncDeps = makeSyncDeps(h.config, h.database);
    const now = later();
    const [a, b] = await Promise.all([syncJobs(h.database, deps, { now }), syncJobs(h.database, other, { now })]);
    expect(a + b).toBe(5);
    const creates = qbo.v3Requests.filter(
      (r) => r.method === 'POST' && r.path.startsWith(`/v3/company/${realm}/customer`),
    );
    expect(creates).toHaveLength(5);
    expect(qbo.list(realm, 'Customer')).toHaveLength(5);
  });

  it('two processes refreshing at once: Intuit is asked once', async () => {
    const { owner, realm } = await connected();
    await customer(owner, 'Solo');
    await syncAll();
    qbo.expireAccessTokens();
    const refreshesBefore = qbo.tokenCalls.filter((t) => t.grantType === 'refresh_token').length;
    for (let i = 0; i < 4; i++) await customer(owner, `Pair${i}`);
    await feedAll(h);
    const now = later();
    await Promise.all([
      syncJobs(h.database, deps, { now, limit: 2 }),
      syncJobs(h.database, makeSyncDeps(h.config, h.database), { now, limit: 2 }),
    ]);
    await syncAll();
    expect(qbo.tokenCalls.filter((t) => t.grantType === 'refresh_token').length - refreshesBefore).toBe(1);
    expect(qbo.list(realm, 'Customer')).toHaveLength(5);
  });

  it('gives up on a record after repeated passing failures, and the rest keeps syncing', async () => {
    const { owner, realm } = await connected();
    const id = await customer(owner, 'Unlucky');
    qbo.script.push(...Array.from({ length: MAX_ATTEMPTS }, () => ({ status: 503 as const })));
    await syncAll();
    const [gaveUp] = await failed(owner);
    expect(gaveUp).toMatchObject({ entityId: id, errorCode: 'GAVE_UP' });
    expect(gaveUp?.error).toContain('503');
    await customer(owner, 'Lucky');
    await syncAll();
    expect(qbo.list(realm, 'Customer').map((c) => c.GivenName)).toEqual(['Lucky']);
  });
});

describe('what syncs besides', () => {
  it('an Item per service (the company’s own by name, else made once), refunds as RefundReceipt, gone customers inactive', async () => {
    const { owner, realm } = await connected();
    const service = async (name: string) => {
      const res = await owner.call('POST', '/api/services', { name, unitPrice: 40 });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().data.id as string;
    };
    const mowing = await service('Mowing: weekly');
    const hedges = await service('Hedge trimming');
    // the accountant made "Hedge trimming" already; and the company has no bank account yet
    qbo.list(realm, 'Item');
    qbo.companies.get(realm)?.get('Item')?.set('500', { Id: '500', SyncToken: '0', Name: 'Hedge trimming' });
    qbo.companies.get(realm)?.get('Account')?.delete('35');

    const rita = await customer(owner, 'Rita', 'Refund');
    const invoice = async (lineItems: unknown[]) => {
      const res = await owner.call('POST', '/api/invoices', { customerId: rita, lineItems });
      expect(res.statusCode, res.body).toBe(201);
      const sent = await owner.call('POST', `/api/invoices/${res.json().data.id}/send`);
      expect(sent.statusCode, sent.body).toBe(200);
      return sent.json().data as { id: string; invoiceNumber: string; total: number };
    };
    const first = await invoice([
      { serviceId: mowing, quantity: 2 },
      { serviceId: hedges, quantity: 1 },
      { description: 'Gas surcharge', quantity: 1, unitPrice: 5 },
    ]);
    const second = await invoice([{ serviceId: mowing, quantity: 1 }]);
    await pay(owner, first.id, 60);
    const [payment] = rowsOf<{ id: string }>(
      await h.admin.db.execute(sql`SELECT id FROM payments WHERE invoice_id = ${first.id}`),
    );
    const refund = await owner.call('POST', `/api/payments/${payment?.id}/refunds`, { amount: 25, reason: 'Rain' });
    expect(refund.statusCode, refund.body).toBe(201);
    await syncAll();

    const items = qbo.list(realm, 'Item');
    expect(items.map((i) => i.Name).sort()).toEqual(['Hedge trimming', 'Mowing weekly', 'Services']);
    const itemId = (name: string) => items.find((i) => i.Name === name)?.Id;
    const lines = (number: string) =>
      (qbo.list(realm, 'Invoice').find((i) => i.DocNumber === number)?.Line as Array<{
        SalesItemLineDetail: { ItemRef: { value: string } };
      }>) ?? [];
    expect(lines(first.invoiceNumber).map((l) => l.SalesItemLineDetail.ItemRef.value)).toEqual([
      itemId('Mowing weekly'),
      '500',
      itemId('Services'),
    ]);
    expect(lines(second.invoiceNumber).map((l) => l.SalesItemLineDetail.ItemRef.value)).toEqual([
      itemId('Mowing weekly'),
    ]);
    // each Item was asked for once by name and made at most once, whatever the number of lines
    const itemCreates = qbo.v3Requests.filter(
      (r) => r.method === 'POST' && r.path.startsWith(`/v3/company/${realm}/item`),
    );
    expect(itemCreates).toHaveLength(2);

    // no bank account to pay the refund from: QuickBooks' refusal is the record's, and a retry sends it
    const [noBank] = await failed(owner);
    expect(noBank).toMatchObject({ errorCode: 'NO_BANK_ACCOUNT' });
    expect(noBank?.error).toContain('no bank account');
    expect(qbo.list(realm, 'RefundReceipt')).toEqual([]);
    qbo.companies
      .get(realm)
      ?.get('Account')
      ?.set('35', { Id: '35', SyncToken: '0', Name: 'Checking', AccountType: 'Bank' });
    expect((await owner.call('POST', `${base}/records/${noBank?.id}/retry`)).statusCode).toBe(200);
    await syncAll();
    expect(await failed(owner)).toEqual([]);
    const ritaThere = qbo.list(realm, 'Customer').find((c) => c.GivenName === 'Rita');
    const [receipt, ...more] = qbo.list(realm, 'RefundReceipt');
    expect(more).toEqual([]);
    expect(receipt).toMatchObject({
      TotalAmt: 25,
      CustomerRef: { value: ritaThere?.Id },
      DepositToAccountRef: { value: '35' },
      Line: [{ Amount: 25, SalesItemLineDetail: { ItemRef: { value: itemId('Services') } } }],
    });
    expect(receipt?.PrivateNote).toContain('Rain');

    // deleted here: inactive there; anonymized here: inactive there with nothing personal left
    const gone = await customer(owner, 'Gone', 'Away');
    const erin = await customer(owner, 'Erin', 'Erased');
    await customer(owner, 'Never', 'Synced');
    await syncAll();
    expect((await owner.call('DELETE', `/api/customers/${gone}`)).statusCode).toBe(204);
    const erased = await owner.call('POST', `/api/customers/${erin}/anonymize`, {});
    expect(erased.statusCode, erased.body).toBe(200);
    const customersBefore = qbo.list(realm, 'Customer').length;
    await syncAll();
    const there = qbo.list(realm, 'Customer');
    expect(there).toHaveLength(customersBefore);
    expect(there.find((c) => c.GivenName === 'Gone')).toMatchObject({ Active: false, SyncToken: '1' });
    const anon = there.find((c) => c.DisplayName === `Anonymized ${erin}`);
    expect(anon).toMatchObject({
      Active: false,
      GivenName: 'Anonymized',
      FamilyName: '',
      PrimaryEmailAddr: { Address: '' },
    });
    expect(JSON.stringify(anon)).not.toContain('Erased');
    expect(there.find((c) => c.GivenName === 'Never')).toMatchObject({ Active: true });
    expect(itemName('Edging:\tfront  yard')).toBe('Edging front yard');
  });
});

describe('the realm’s limits, across workers', () => {
  it('two workers share the realm’s slots and its minute, and a 429 pauses both', async () => {
    const limits = { concurrent: 2, perWindow: 5, windowSec: 60 };
    const a = makeSyncDeps(h.config, h.database, limits);
    const b = makeSyncDeps(h.config, h.database, limits);
    const { owner, realm } = await connected();
    for (let i = 0; i < 8; i++) await customer(owner, `Paced${i}`);
    await feedAll(h);
    const toRealm = () => qbo.v3Requests.filter((r) => r.path.startsWith(`/v3/company/${realm}/`)).length;

    // the slots: whichever worker claims first takes both, the other finds none left
    const now = later();
    const [ra, rb] = await Promise.all([syncJobs(h.database, a, { now }), syncJobs(h.database, b, { now })]);
    expect(ra + rb).toBe(2);
    expect(toRealm()).toBe(2);

    // the minute: five requests in all, however the passes fall between the two workers
    for (let i = 0; i < 6; i++) await syncJobs(h.database, i % 2 ? a : b, { now: later() });
    expect(toRealm()).toBe(5);
    expect(qbo.list(realm, 'Customer')).toHaveLength(5);
    expect(await failed(owner)).toEqual([]);
    const waiting = await h.admin.db
      .select()
      .from(quickbooksSyncJobs)
      .where(eq(quickbooksSyncJobs.organizationId, owner.organizationId));
    expect(waiting.filter((j) => j.status === 'pending').map((j) => j.attempts)).toEqual([0, 0, 0]);

    // a 429 told to one worker holds the other too
    const other = await connected();
    await customer(other.owner, 'Told');
    await feedAll(h);
    qbo.script.push({ status: 429, retryAfter: '30' });
    await syncJobs(h.database, a, { now: later() });
    const asked = qbo.v3Requests.length;
    await syncJobs(h.database, b, { now: later() });
    await syncJobs(h.database, a, { now: later() });
    expect(qbo.v3Requests.length).toBe(asked);
    expect(qbo.list(other.realm, 'Customer')).toEqual([]);
    await a.close();
    await b.close();
  });
});
