import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrmClient } from '../../clients/typescript/src/index.js';
import { DOCUMENT_FILE, documentText, TYPES_FILE, typesText } from '../../scripts/generate-client.js';
import { apiKeyCaller, createHarness, type Harness, newTenant } from '../harness.js';

/**
 * The checked-in typed client (clients/typescript) must be generated from the document the
 * server serves now. When this fails after a route change, run `npm run client:generate`.
 */
describe('Typed client (clients/typescript)', () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await createHarness();
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const address = h.app.server.address();
    if (!address || typeof address === 'string') throw new Error('no address');
    base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => h?.close());

  it('is current with /openapi.json (else run `npm run client:generate`)', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const stale = 'clients/typescript is stale: run `npm run client:generate` and commit the result';
    expect(readFileSync(DOCUMENT_FILE, 'utf8') === documentText(doc), stale).toBe(true);
    expect(readFileSync(TYPES_FILE, 'utf8') === (await typesText(doc)), stale).toBe(true);
  });

  it('calls the API end to end over HTTP with typed requests and responses', async () => {
    const owner = await newTenant(h);
    const { key } = await apiKeyCaller(h, owner);
    const crm = createCrmClient({ baseUrl: base, apiKey: key });

    const created = await crm.POST('/api/customers', {
      body: { firstName: 'Dana', lastName: 'Reyes', email: 'dana@example.com' },
      params: { header: { 'Idempotency-Key': 'client-test-1' } },
    });
    expect(created.response.status).toBe(201);
    const id = created.data?.data.id as string;
    expect(id).toMatch(/^cus_/);

    const read = await crm.GET('/api/customers/{id}', { params: { path: { id } } });
    expect(read.data?.data.name).toBe('Dana Reyes');

    const list = await crm.GET('/api/customers', { params: { query: { limit: 10 } } });
    expect(list.data?.data.map((c) => c.id)).toContain(id);

    const missing = await crm.GET('/api/customers/{id}', { params: { path: { id: 'cus_missing' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('NOT_FOUND');

    const anonymous = createCrmClient({ baseUrl: base });
    const denied = await anonymous.GET('/api/customers');
    expect(denied.error?.error.code).toBe('UNAUTHENTICATED');
  });
});
