import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { rowsOf } from '../../src/db/client.js';
import { quickbooksConnections, quickbooksSyncJobs } from '../../src/db/schema/index.js';
import { readState, signState } from '../../src/modules/quickbooks/quickbooks.oauth.js';
import { makeSyncDeps, type SyncDeps } from '../../src/modules/quickbooks/quickbooks.deps.js';
import { feedJobs } from '../../src/modules/quickbooks/quickbooks.feed.js';
import { MAX_ATTEMPTS } from '../../src/modules/quickbooks/quickbooks.jobs.js';
import { syncJobs } from '../../src/modules/quickbooks/quickbooks.sync.js';
import { SecretBox } from '../../src/platform/secrets.js';
import { addMember, createHarness, type Harness, newTenant, TEST_ENV, type TestUser } from '../harness.js';
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

/**
 * Feed passes until every connected organization's place is at its last event. The feed reads
 * only events of transactions older than every transaction still running (on a shared
 * PostgreSQL, another client's open transaction holds it back a moment), so it may take a few.
 */
async function feedAll() {
  for (let i = 0; i < 1_000; i++) {
    await feedJobs(h.database);
    const [behind] = rowsOf<{ n: number | string }>(
      await h.admin.db.execute(sql`
        SELECT count(*) AS n FROM quickbooks_connections c
        WHERE c.status = 'connected' AND EXISTS (SELECT 1 FROM events e
          WHERE e.organization_id = c.organization_id AND (e.tx, e.id) > (c.feed_tx, c.feed_event_id))`),
    );
    if (Number(behind?.n) === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('the feed did not catch up');
}

/** Feed and sync passes until nothing is due (bounded). */
async function syncAll(passes = 60) {
  for (let i = 0; i < passes; i++) {
    await feedAll();
    const synced = await syncJobs(h.database, deps, { now: later() });
    if (synced === 0) return;
  }
  throw new Error('the sync did not settle');
}

const base = '/api/integrations/quickbooks';

/** An organization connected to a fresh QuickBooks company of the stand-in. */
async function connected(user?: TestUser): Promise<{ owner: TestUser; realm: string }> {
  const owner = user ?? (await newTenant(h, { name: 'Green Acres' }));
  const realm = `${9_130_000_000 + ++realms}`;
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
    await feedAll();
    await h.admin.db.execute(sql`UPDATE quickbooks_connections SET feed_tx = 0, feed_event_id = ''`);
    await feedAll(); // a second feed over the same events makes nothing twice
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
    await feedAll();
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
