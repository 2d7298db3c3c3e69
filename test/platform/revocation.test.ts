import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type Database, openDatabase } from '../../src/db/client.js';
import { apiKeys, organizations } from '../../src/db/schema/index.js';
import { bumpAuthGeneration } from '../../src/platform/auth/revocations.js';
import { deviceCaller } from '../crew-tracking/helpers.js';
import { addMember, caller, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

const onPostgres = inject('database').kind === 'postgres';

/**
 * Two API instances with their own credential caches and their own pools on one
 * PostgreSQL database, as two API processes are. A credential is first used on the
 * second instance (so it is cached there), then revoked through the first: the second
 * must refuse it on the very next request, not after its cache expires.
 */
describe.skipIf(!onPostgres)('revocation reaches every API process before the revoking request answers', () => {
  let h: Harness;
  let other: FastifyInstance;
  let otherDb: Database;
  let owner: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    const url = (h.database.pool as unknown as { options: { connectionString: string } }).options.connectionString;
    otherDb = await openDatabase({ databaseUrl: url, poolMax: 4 });
    other = await buildApp(h.config, otherDb);
    owner = await newTenant(h);
  });
  afterAll(async () => {
    await other?.close();
    await otherDb?.close();
    await h?.close();
  });

  /** The same credential headers, sent to the other instance. */
  const onOther = (headers: Record<string, string>) => caller(other, headers);

  it('a revoked API key', async () => {
    const created = await owner.call('POST', '/api/api-keys', { name: 'integration', role: 'admin' });
    const { key, id } = created.json().data as { key: string; id: string };
    const elsewhere = onOther({ authorization: `Bearer ${key}` });
    expect((await elsewhere('GET', '/api/members')).statusCode).toBe(200);
    expect((await elsewhere('GET', '/api/members')).statusCode).toBe(200); // served from its cache
    expect((await owner.call('DELETE', `/api/api-keys/${id}`)).statusCode).toBe(204);
    expect((await elsewhere('GET', '/api/members')).statusCode).toBe(401);
  });

  it('a revoked device token', async () => {
    const member = await addMember(h, owner, 'member');
    const device = await deviceCaller(
      h,
      owner,
      (await owner.call('GET', '/api/members')).json().data.find((m: { userId: string }) => m.userId === member.userId)
        .id,
    );
    const elsewhere = onOther({ authorization: `Bearer ${device.token}` });
    expect((await elsewhere('GET', '/api/jobs')).statusCode).toBe(200);
    expect((await owner.call('DELETE', `/api/crew-tracking/devices/${device.id}`)).statusCode).toBe(204);
    expect((await elsewhere('GET', '/api/jobs')).statusCode).toBe(401);
  });

  it('a removed member and a signed-out session', async () => {
    const member = await addMember(h, owner, 'admin');
    const elsewhere = onOther({ cookie: member.cookie });
    expect((await elsewhere('GET', '/api/members')).statusCode).toBe(200);
    const memberId = (await owner.call('GET', '/api/members'))
      .json()
      .data.find((m: { userId: string }) => m.userId === member.userId).id;
    expect((await owner.call('DELETE', `/api/members/${memberId}`)).statusCode).toBeLessThan(300);
    expect((await elsewhere('GET', '/api/members')).statusCode).toBe(403);

    const mine = onOther({ cookie: owner.cookie });
    expect((await mine('GET', '/api/members')).statusCode).toBe(200);
    expect((await owner.call('POST', '/api/auth/sign-out')).statusCode).toBe(200);
    expect((await mine('GET', '/api/members')).statusCode).toBe(401);
  });

  // The bump is part of the revoking transaction (a trigger), not a step after it: a
  // revocation committed by a process that then died (here: written straight to the
  // database, no route, no announcement) still reaches every process at once.
  it('a revocation committed with nothing announced after it (the revoking process died)', async () => {
    const owner = await newTenant(h); // the suite's owner signed out above
    const created = await owner.call('POST', '/api/api-keys', { name: 'orphaned', role: 'admin' });
    const { key, id } = created.json().data as { key: string; id: string };
    const elsewhere = onOther({ authorization: `Bearer ${key}` });
    expect((await elsewhere('GET', '/api/members')).statusCode).toBe(200);
    expect((await elsewhere('GET', '/api/members')).statusCode).toBe(200); // served from its cache
    // What the revoking function commits (drizzle/0042): the change and the generation, one transaction.
    await h.admin.db.transaction(async (tx) => {
      await tx.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, id));
      await bumpAuthGeneration(tx);
    });
    expect((await elsewhere('GET', '/api/members')).statusCode).toBe(401);

    // A plan change made the same way: the other process stops serving the old plan at once.
    const webhooks = onOther({ cookie: owner.cookie });
    expect((await webhooks('GET', '/api/webhooks')).statusCode).toBe(200);
    await h.admin.db.transaction(async (tx) => {
      await tx.update(organizations).set({ plan: 'starter' }).where(eq(organizations.id, owner.organizationId));
      await bumpAuthGeneration(tx);
    });
    expect((await webhooks('GET', '/api/webhooks')).statusCode).toBe(403);
  });
});
