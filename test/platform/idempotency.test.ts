import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { tenantOf } from '../../src/platform/access.js';
import { AppError } from '../../src/platform/errors.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/** Test routes: one that fails with 500 once, one that waits until released. */
let flakyFailures = 0;
let slowEntered: () => void = () => {};
let slowRelease: () => void = () => {};
let slowCalls = 0;

function extraRoutes(app: FastifyInstance) {
  const schema = {
    tags: ['test'],
    summary: 'test',
    body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }),
    response: { 201: Type.Object({ data: Type.Object({ n: Type.Integer(), call: Type.Integer() }) }) },
  };
  let flakyCalls = 0;
  app.post('/api/test/flaky', { schema }, async (request, reply) => {
    tenantOf(request);
    flakyCalls++;
    if (flakyFailures > 0) {
      flakyFailures--;
      throw new Error('transient failure');
    }
    return reply.code(201).send({ data: { n: (request.body as { n: number }).n, call: flakyCalls } });
  });
  app.post('/api/test/slow', { schema }, async (request, reply) => {
    slowCalls++;
    const released = new Promise<void>((resolve) => {
      slowRelease = resolve;
    });
    slowEntered();
    await released;
    return reply.code(201).send({ data: { n: (request.body as { n: number }).n, call: slowCalls } });
  });
  app.post('/api/test/missing', { schema, config: { errors: [404] } }, async () => {
    throw new AppError('NOT_FOUND', 'Thing not found');
  });
}

describe('Idempotency-Key on POST', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness({}, { extraRoutes });
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  const invitationCount = async () =>
    rowsOf<{ n: number }>(
      await h.admin.db.execute(
        sql`SELECT count(*)::int AS n FROM invitations WHERE organization_id = ${owner.organizationId}`,
      ),
    )[0]?.n;

  it('replays the first response (status and body) with Idempotent-Replayed, creating nothing twice', async () => {
    const key = { headers: { 'idempotency-key': 'invite-1' } };
    const body = { email: 'crew@example.com', role: 'member' };
    const first = await owner.call('POST', '/api/invitations', body, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await owner.call('POST', '/api/invitations', body, key);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(again.headers['content-type']).toMatch(/application\/json/);
    expect(await invitationCount()).toBe(1);
    // The same JSON with its keys in another order is the same request.
    const reordered = await owner.call('POST', '/api/invitations', { role: 'member', email: 'crew@example.com' }, key);
    expect(reordered.headers['idempotent-replayed']).toBe('true');
    // Without a key, the same body creates a second invitation.
    expect((await owner.call('POST', '/api/invitations', body)).statusCode).toBe(201);
    expect(await invitationCount()).toBe(2);
  });

  it('answers 422 IDEMPOTENCY_KEY_REUSED for the same key with another body, path or principal', async () => {
    const key = { headers: { 'idempotency-key': 'invite-2' } };
    expect(
      (await owner.call('POST', '/api/invitations', { email: 'a@example.com', role: 'member' }, key)).statusCode,
    ).toBe(201);
    const before = await invitationCount();
    const otherBody = await owner.call('POST', '/api/invitations', { email: 'b@example.com', role: 'member' }, key);
    expect(otherBody.statusCode).toBe(422);
    expect(otherBody.json().error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const otherPath = await owner.call('POST', '/api/test/flaky', { n: 1 }, key);
    expect(otherPath.statusCode).toBe(422);
    const admin = await addMember(h, owner, 'admin');
    const otherPrincipal = await admin.call(
      'POST',
      '/api/invitations',
      { email: 'a@example.com', role: 'member' },
      key,
    );
    expect(otherPrincipal.statusCode).toBe(422);
    expect(await invitationCount()).toBe((before ?? 0) + 1); // +1: the admin's own invitation by addMember
  });

  it('keeps keys per organization', async () => {
    const other = await newTenant(h, { name: 'Other' });
    const key = { headers: { 'idempotency-key': 'shared-key' } };
    const a = await owner.call('POST', '/api/test/flaky', { n: 7 }, key);
    const b = await other.call('POST', '/api/test/flaky', { n: 7 }, key);
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json().data.call).not.toBe(a.json().data.call);
  });

  it('does not store a 5xx: a retry with the same key runs again', async () => {
    flakyFailures = 1;
    const key = { headers: { 'idempotency-key': 'flaky-1' } };
    const failed = await owner.call('POST', '/api/test/flaky', { n: 2 }, key);
    expect(failed.statusCode).toBe(500);
    const retried = await owner.call('POST', '/api/test/flaky', { n: 2 }, key);
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    const replay = await owner.call('POST', '/api/test/flaky', { n: 2 }, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(retried.json());
  });

  it('stores a 4xx from the handler like Stripe does', async () => {
    const key = { headers: { 'idempotency-key': 'missing-1' } };
    const first = await owner.call('POST', '/api/test/missing', { n: 1 }, key);
    expect(first.statusCode).toBe(404);
    const again = await owner.call('POST', '/api/test/missing', { n: 1 }, key);
    expect(again.statusCode).toBe(404);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().error.code).toBe('NOT_FOUND');
  });

  it('answers 409 CONFLICT while the first request with the key is still running', async () => {
    const key = { headers: { 'idempotency-key': 'slow-1' } };
    const entered = new Promise<void>((resolve) => {
      slowEntered = resolve;
    });
    const first = owner.call('POST', '/api/test/slow', { n: 3 }, key);
    await entered;
    const twin = await owner.call('POST', '/api/test/slow', { n: 3 }, key);
    expect(twin.statusCode).toBe(409);
    expect(twin.json().error.code).toBe('CONFLICT');
    slowRelease();
    const done = await first;
    expect(done.statusCode).toBe(201);
    const replay = await owner.call('POST', '/api/test/slow', { n: 3 }, key);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(done.json());
    expect(slowCalls).toBe(1);
  });

  it('runs the handler once when many requests race with one key (true concurrency on PostgreSQL)', async () => {
    const key = { headers: { 'idempotency-key': 'race-1' } };
    const results = await Promise.all(
      Array.from({ length: 8 }, () => owner.call('POST', '/api/test/flaky', { n: 9 }, key)),
    );
    const fresh = results.filter((r) => r.statusCode === 201 && !r.headers['idempotent-replayed']);
    expect(fresh).toHaveLength(1);
    for (const r of results) {
      if (r === fresh[0]) continue;
      if (r.statusCode === 409) expect(r.json().error.code).toBe('CONFLICT');
      else {
        expect(r.statusCode).toBe(201);
        expect(r.headers['idempotent-replayed']).toBe('true');
        expect(r.json()).toEqual(fresh[0]?.json());
      }
    }
  });

  it('refuses a malformed key with 400', async () => {
    for (const bad of ['x'.repeat(256), 'has space', 'ü']) {
      const res = await owner.call('POST', '/api/test/flaky', { n: 1 }, { headers: { 'idempotency-key': bad } });
      expect(res.statusCode, bad.slice(0, 10)).toBe(400);
      expect(res.json().error.details[0].field).toBe('Idempotency-Key');
    }
  });
});
