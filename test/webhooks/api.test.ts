import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_CATALOG } from '../../src/platform/events/catalog.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { routeSecuritySuite } from '../security.js';

routeSecuritySuite('webhooks', async (_h, owner) => {
  const created = await owner.call('POST', '/api/webhooks', { url: 'https://hooks.example.com/a', events: ['*'] });
  const id = created.json().data.id as string;
  const test = await owner.call('POST', `/api/webhooks/${id}/test`);
  const dlv = test.json().data.id as string;
  const all = { adminOnly: true, businessOnly: true } as const;
  return [
    { method: 'POST', url: '/api/webhooks', body: { url: 'https://hooks.example.com/b', events: ['*'] }, ...all },
    { method: 'GET', url: '/api/webhooks', ...all },
    { method: 'GET', url: `/api/webhooks/${id}`, crossTenant: true, ...all },
    { method: 'PATCH', url: `/api/webhooks/${id}`, body: { description: 'x' }, crossTenant: true, ...all },
    { method: 'POST', url: `/api/webhooks/${id}/rotate-secret`, crossTenant: true, ...all },
    { method: 'POST', url: `/api/webhooks/${id}/enable`, crossTenant: true, ...all },
    { method: 'POST', url: `/api/webhooks/${id}/test`, crossTenant: true, ...all },
    { method: 'GET', url: `/api/webhooks/${id}/deliveries`, crossTenant: true, ...all },
    { method: 'GET', url: `/api/webhook-deliveries/${dlv}`, crossTenant: true, ...all },
    { method: 'POST', url: `/api/webhook-deliveries/${dlv}/requeue`, crossTenant: true, ...all },
    { method: 'DELETE', url: `/api/webhooks/${id}`, crossTenant: true, ...all },
  ];
});

describe('webhook endpoints API', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('registers an endpoint and shows the secret only at creation', async () => {
    const res = await owner.call('POST', '/api/webhooks', {
      url: 'https://hooks.example.com/crm',
      events: ['invoice.paid', 'invoice.status_changed'],
      description: 'Accounting sync',
    });
    expect(res.statusCode).toBe(201);
    const d = res.json().data;
    expect(d.id).toMatch(/^whk_/);
    expect(d).toMatchObject({
      url: 'https://hooks.example.com/crm',
      events: ['invoice.paid', 'invoice.status_changed'],
      description: 'Accounting sync',
      active: true,
    });
    expect(d.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(d.secret.slice(6), 'base64')).toHaveLength(32);
    expect(typeof d.createdAt).toBe('string');

    const got = await owner.call('GET', `/api/webhooks/${d.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().data.secret).toBeUndefined();
    const list = await owner.call('GET', '/api/webhooks?includeTotal=true');
    expect(list.headers['x-total-count']).toBe('1');
    expect(JSON.stringify(list.json())).not.toContain('whsec_');
  });

  it('does not store the secret in plain text', async () => {
    const res = await owner.call('POST', '/api/webhooks', { url: 'https://hooks.example.com/s', events: ['*'] });
    const { secret, id } = res.json().data;
    const { rows } = (await h.admin.db.execute(
      `SELECT secret_enc FROM webhook_endpoints WHERE id = '${id}'` as never,
    )) as unknown as { rows: Array<{ secret_enc: string }> };
    expect(rows[0]?.secret_enc).toBeTruthy();
    expect(rows[0]?.secret_enc).not.toContain(secret.slice(6, 20));
  });

  it('rejects the whole registration when any event name is unknown, naming it', async () => {
    const before = (await owner.call('GET', '/api/webhooks?includeTotal=true')).headers['x-total-count'];
    const res = await owner.call('POST', '/api/webhooks', {
      url: 'https://hooks.example.com/x',
      events: ['invoice.paid', 'invoice.exploded', 'nope'],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
    expect(res.json().error.message).toContain('invoice.exploded');
    expect(res.json().error.message).toContain('nope');
    expect(res.json().error.details).toEqual([
      { field: 'events[1]', message: 'unknown event "invoice.exploded"' },
      { field: 'events[2]', message: 'unknown event "nope"' },
    ]);
    expect((await owner.call('GET', '/api/webhooks?includeTotal=true')).headers['x-total-count']).toBe(before);
  });

  it('rejects an empty event list, the test event, bad URLs and unknown fields', async () => {
    const cases: Array<[unknown, string]> = [
      [{ url: 'https://a.example.com', events: [] }, 'events'],
      [{ url: 'https://a.example.com', events: ['webhook.test'] }, 'webhook.test'],
      [{ url: 'not a url', events: ['*'] }, 'url'],
      [{ url: 'ftp://a.example.com/x', events: ['*'] }, 'url'],
      [{ url: 'https://user:pw@a.example.com/x', events: ['*'] }, 'credentials'],
      [{ url: 'https://a.example.com', events: ['*'], secret: 'mine' }, ''],
      [{ events: ['*'] }, 'url'],
    ];
    for (const [body, hint] of cases) {
      const res = await owner.call('POST', '/api/webhooks', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.message).toContain(hint);
    }
  });

  it('accepts * and explicit workflow events, and validates on PATCH too', async () => {
    const res = await owner.call('POST', '/api/webhooks', {
      url: 'https://hooks.example.com/w',
      events: ['*', 'workflow.lead_scored', '*'],
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.events).toEqual(['*', 'workflow.lead_scored']);
    const id = res.json().data.id;
    const bad = await owner.call('PATCH', `/api/webhooks/${id}`, { events: ['customer.created', 'customer.exploded'] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toContain('customer.exploded');
    const good = await owner.call('PATCH', `/api/webhooks/${id}`, {
      events: [EVENT_CATALOG[0]],
      description: null,
      url: 'https://hooks.example.com/w2',
    });
    expect(good.statusCode).toBe(200);
    expect(good.json().data).toMatchObject({
      events: ['customer.created'],
      description: null,
      url: 'https://hooks.example.com/w2',
    });
    expect((await owner.call('PATCH', `/api/webhooks/${id}`, {})).statusCode).toBe(400);
  });

  it('rotates the secret with a 24 h overlap', async () => {
    const created = (
      await owner.call('POST', '/api/webhooks', { url: 'https://hooks.example.com/r', events: ['*'] })
    ).json().data;
    const before = Date.now();
    const rot = await owner.call('POST', `/api/webhooks/${created.id}/rotate-secret`);
    expect(rot.statusCode).toBe(200);
    const r = rot.json().data;
    expect(r.secret).toMatch(/^whsec_/);
    expect(r.secret).not.toBe(created.secret);
    const expires = Date.parse(r.previousSecretExpiresAt);
    expect(expires - before).toBeGreaterThanOrEqual(24 * 3600 * 1000 - 1000);
    expect(expires - before).toBeLessThanOrEqual(24 * 3600 * 1000 + 60_000);
    const got = (await owner.call('GET', `/api/webhooks/${created.id}`)).json().data;
    expect(got.previousSecretExpiresAt).toBe(r.previousSecretExpiresAt);
    // Action routes take no body, or {}.
    expect((await owner.call('POST', `/api/webhooks/${created.id}/rotate-secret`, {})).statusCode).toBe(200);
    const withBody = await owner.call('POST', `/api/webhooks/${created.id}/rotate-secret`, { secret: 'mine' });
    expect(withBody.statusCode).toBe(400);
  });

  it('answers 404 for unknown ids and 409 for requeueing a live delivery', async () => {
    for (const [m, u] of [
      ['GET', '/api/webhooks/whk_missing'],
      ['DELETE', '/api/webhooks/whk_missing'],
      ['POST', '/api/webhooks/whk_missing/rotate-secret'],
      ['GET', '/api/webhooks/whk_missing/deliveries'],
      ['GET', '/api/webhook-deliveries/dlv_missing'],
      ['POST', '/api/webhook-deliveries/dlv_missing/requeue'],
    ] as const) {
      const res = await owner.call(m, u);
      expect(res.statusCode, `${m} ${u}`).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
    }
    const ep = (await owner.call('POST', '/api/webhooks', { url: 'https://hooks.example.com/t', events: ['*'] })).json()
      .data;
    const test = await owner.call('POST', `/api/webhooks/${ep.id}/test`);
    expect(test.statusCode).toBe(200);
    expect(test.json().data).toMatchObject({ event: 'webhook.test', status: 'pending', attempts: 0 });
    const requeue = await owner.call('POST', `/api/webhook-deliveries/${test.json().data.id}/requeue`);
    expect(requeue.statusCode).toBe(409);
    const bad = await owner.call('GET', `/api/webhooks/${ep.id}/deliveries?status=lost`);
    expect(bad.statusCode).toBe(400);
    const list = await owner.call('GET', `/api/webhooks/${ep.id}/deliveries?status=pending`);
    expect(list.json().data.map((x: { id: string }) => x.id)).toEqual([test.json().data.id]);
    const del = await owner.call('DELETE', `/api/webhooks/${ep.id}`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await owner.call('GET', `/api/webhook-deliveries/${test.json().data.id}`)).statusCode).toBe(404);
  });

  it('refuses plain http and private targets when private targets are not allowed', async () => {
    const strict = await createHarness({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const o = await newTenant(strict);
      for (const url of [
        'http://hooks.example.com/x',
        'https://127.0.0.1/x',
        'https://2130706433/x',
        'https://0x7f.1/x',
        'https://[::1]/x',
        'https://[::ffff:10.0.0.1]/x',
        'https://169.254.169.254/latest/meta-data',
        'https://[fd00:ec2::254]/x',
        'https://localhost/x',
        'https://100.64.1.1/x',
      ]) {
        const res = await o.call('POST', '/api/webhooks', { url, events: ['*'] });
        expect(res.statusCode, url).toBe(400);
        expect(res.json().error.details[0].field).toBe('url');
      }
      expect((await o.call('GET', '/api/webhooks?includeTotal=true')).headers['x-total-count']).toBe('0');
      const okRes = await o.call('POST', '/api/webhooks', { url: 'https://93.184.215.14/hook', events: ['*'] });
      expect(okRes.statusCode).toBe(201);
    } finally {
      await strict.close();
    }
  });
});
