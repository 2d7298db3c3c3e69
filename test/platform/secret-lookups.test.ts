import { readFileSync } from 'node:fs';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeys, deviceTokens, portalTokens, secretLookups } from '../../src/db/schema/index.js';
import { forgetSecret, hashSecret, recordSecret } from '../../src/platform/auth/secret-lookups.js';
import { withTenant } from '../../src/platform/tenancy.js';
import { deviceCaller, memberIdOf } from '../crew-tracking/helpers.js';
import { createCustomer, line } from '../factories.js';
import { addMember, caller, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Secrets that arrive without an organization (API keys, device tokens, portal links) are found
 * through the global `secret_lookups` table first, then in their tenant table filtered by the
 * organization it names (operations.md §13, drizzle/0036_secret_lookups.sql).
 */
let h: Harness;
let owner: TestUser;
let other: TestUser;

beforeAll(async () => {
  h = await createHarness({ BASE_URL: 'http://crm.test' });
  owner = await newTenant(h);
  other = await newTenant(h);
});
afterAll(async () => h?.close());

const lookupOf = async (kind: 'api_key' | 'device_token' | 'portal_token', hash: string) =>
  (
    await h.admin.db
      .select()
      .from(secretLookups)
      .where(and(eq(secretLookups.kind, kind), eq(secretLookups.hash, hash)))
  )[0];

async function newKey(by: TestUser = owner) {
  const res = await by.call('POST', '/api/api-keys', { name: 'integration', role: 'admin' });
  expect(res.statusCode, res.body).toBe(201);
  const { key, id } = res.json().data as { key: string; id: string };
  return { key, id, call: caller(h.app, { authorization: `Bearer ${key}` }) };
}

async function sendEstimate(by: TestUser = owner) {
  const customer = await createCustomer(h, by);
  const est = await by.call('POST', '/api/estimates', { customerId: customer.id, lineItems: [line('Patio', 1, 100)] });
  expect(est.statusCode, est.body).toBe(201);
  const sent = await by.call('POST', `/api/estimates/${est.json().data.id}/send`);
  expect(sent.statusCode, sent.body).toBe(200);
  const path = new URL(sent.json().data.portalUrl).pathname;
  return { path, token: path.split('/').pop() as string };
}

describe('the global secret lookup', () => {
  it('maps an API key to its organization when it is created, and forgets it when it is revoked', async () => {
    const { key, id, call } = await newKey();
    expect(await lookupOf('api_key', hashSecret(key))).toMatchObject({ tenantId: owner.organizationId });
    expect((await call('GET', '/api/members')).statusCode).toBe(200);
    expect((await owner.call('DELETE', `/api/api-keys/${id}`)).statusCode).toBe(204);
    expect(await lookupOf('api_key', hashSecret(key))).toBeUndefined();
    expect((await call('GET', '/api/members')).statusCode).toBe(401);
  });

  it('maps a device token likewise; a revoked device answers 401', async () => {
    const member = await addMember(h, owner, 'member');
    const device = await deviceCaller(h, owner, await memberIdOf(owner, member));
    expect(await lookupOf('device_token', hashSecret(device.token))).toMatchObject({ tenantId: owner.organizationId });
    expect((await device.call('GET', '/api/jobs')).statusCode).toBe(200);
    expect((await owner.call('DELETE', `/api/crew-tracking/devices/${device.id}`)).statusCode).toBe(204);
    expect(await lookupOf('device_token', hashSecret(device.token))).toBeUndefined();
    expect((await device.call('GET', '/api/jobs')).statusCode).toBe(401);
  });

  it('maps a portal link; the customer page opens through it', async () => {
    const { path, token } = await sendEstimate();
    expect(await lookupOf('portal_token', hashSecret(token))).toMatchObject({ tenantId: owner.organizationId });
    expect((await h.app.inject({ method: 'GET', url: path })).statusCode).toBe(200);
  });

  it('a key revoked in its table alone (its mapping left behind) still answers 401', async () => {
    const { key, id, call } = await newKey();
    await h.admin.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id));
    expect(await lookupOf('api_key', hashSecret(key))).toBeDefined();
    expect((await call('GET', '/api/members')).statusCode).toBe(401);
  });

  it('a mapping whose row is gone answers 401 (keys, devices) and 404 (portal links), never 500', async () => {
    const { key, id, call } = await newKey();
    await h.admin.db.delete(apiKeys).where(eq(apiKeys.id, id));
    expect(await lookupOf('api_key', hashSecret(key))).toBeDefined();
    expect((await call('GET', '/api/members')).statusCode).toBe(401);

    const member = await addMember(h, owner, 'member');
    const device = await deviceCaller(h, owner, await memberIdOf(owner, member));
    await h.admin.db.delete(deviceTokens).where(eq(deviceTokens.id, device.id));
    expect((await device.call('GET', '/api/jobs')).statusCode).toBe(401);

    const { path, token } = await sendEstimate();
    await h.admin.db.delete(portalTokens).where(eq(portalTokens.tokenHash, hashSecret(token)));
    expect((await h.app.inject({ method: 'GET', url: path })).statusCode).toBe(404);
    // The same for a mapping to an organization that does not exist at all.
    await h.admin.db
      .update(secretLookups)
      .set({ tenantId: 'org_gone' })
      .where(eq(secretLookups.hash, hashSecret(token)));
    expect((await h.app.inject({ method: 'GET', url: path })).statusCode).toBe(404);
  });

  it('the tenant table is read within the organization the mapping names, never by the hash alone', async () => {
    // A mapping pointed at another organization finds nothing: the key row is in its own. (Not
    // presented before: a resolved key is cached for a few seconds, principal.ts.)
    const { key, call } = await newKey();
    await h.admin.db
      .update(secretLookups)
      .set({ tenantId: other.organizationId })
      .where(eq(secretLookups.hash, hashSecret(key)));
    expect((await call('GET', '/api/members')).statusCode).toBe(401);
  });

  it("a tenant transaction reads no mapping, and maps or unmaps only its own organization's secrets", async () => {
    const theirs = await newKey(other);
    const denied = await withTenant(h.database.db, owner.organizationId, (tx) =>
      tx.select().from(secretLookups).limit(1),
    ).catch((err: Error) => err);
    expect(String((denied as Error & { cause?: unknown }).cause ?? denied)).toMatch(/permission denied/);
    // The functions take the organization from the transaction, never from the caller.
    const hash = 'e'.repeat(64);
    await withTenant(h.database.db, owner.organizationId, (tx) => recordSecret(tx, 'api_key', hash));
    expect(await lookupOf('api_key', hash)).toMatchObject({ tenantId: owner.organizationId });
    await withTenant(h.database.db, owner.organizationId, (tx) => forgetSecret(tx, 'api_key', hashSecret(theirs.key)));
    expect(await lookupOf('api_key', hashSecret(theirs.key))).toMatchObject({ tenantId: other.organizationId });
    expect((await theirs.call('GET', '/api/members')).statusCode).toBe(200);
  });

  it("the migration's backfill maps every live key and token, and no revoked one", async () => {
    await newKey();
    const revoked = await newKey();
    await owner.call('DELETE', `/api/api-keys/${revoked.id}`);
    await sendEstimate();
    const inserts = readFileSync(new URL('../../drizzle/0036_secret_lookups.sql', import.meta.url), 'utf8')
      .split('--> statement-breakpoint')
      .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
      .filter((s) => s.startsWith('INSERT INTO'));
    expect(inserts).toHaveLength(3);
    await h.admin.db.transaction(async (tx) => {
      await tx.execute(sql`DELETE FROM secret_lookups`);
      for (const statement of inserts) await tx.execute(sql.raw(statement));
    });
    const mapped = (await h.admin.db.select().from(secretLookups)).map((r) => `${r.kind} ${r.hash} ${r.tenantId}`);
    const live = [
      ...(await h.admin.db.select().from(apiKeys))
        .filter((k) => k.revokedAt === null)
        .map((k) => `api_key ${k.keyHash} ${k.organizationId}`),
      ...(await h.admin.db.select().from(deviceTokens))
        .filter((d) => d.revokedAt === null)
        .map((d) => `device_token ${d.tokenHash} ${d.organizationId}`),
      ...(await h.admin.db.select().from(portalTokens)).map((p) => `portal_token ${p.tokenHash} ${p.organizationId}`),
    ];
    expect(mapped.sort()).toEqual(live.sort());
    expect(mapped.some((r) => r.includes(hashSecret(revoked.key)))).toBe(false);
    expect(mapped.length).toBeGreaterThan(3);
  });
});
