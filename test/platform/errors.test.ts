import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validationDetails } from '../../src/platform/error-handler.js';
import { apiKeyCaller, createHarness, type Harness, newTenant, setPlan, type TestUser } from '../harness.js';

describe('Error answers', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('gives exactly one details entry per offending field, in plain words', async () => {
    const res = await owner.call('POST', '/api/customers', {
      firstName: 'Dana',
      email: 42,
      customerType: 'alien',
      bogus: true,
    });
    expect(res.statusCode).toBe(400);
    const details = res.json().error.details as Array<{ field: string; message: string }>;
    expect(details.map((d) => d.field).sort()).toEqual(['bogus', 'customerType', 'email']);
    expect(details.find((d) => d.field === 'email')?.message).toBe('must be a string or null');
    expect(details.find((d) => d.field === 'bogus')?.message).toBe('is not an accepted field');
    expect(res.json().error.code).toBe('VALIDATION_FAILED');
  });

  it('reports only the unknown field for an action given a body, not "(body) must be null"', async () => {
    const created = await owner.call('POST', '/api/customers', { firstName: 'Ed' });
    const res = await owner.call('POST', `/api/customers/${created.json().data.id}/deactivate`, { force: true });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details).toEqual([{ field: 'force', message: 'is not an accepted field' }]);
  });

  it('reports the deeper problem when a nullable object has a bad field', () => {
    // Ajv's output for Nullable(Object({zip: String})) given {zip: 5}.
    const details = validationDetails(
      [
        {
          instancePath: '/address/zip',
          schemaPath: '#/properties/address/anyOf/0/properties/zip/type',
          keyword: 'type',
          params: { type: 'string' },
          message: 'must be string',
        },
        {
          instancePath: '/address',
          schemaPath: '#/properties/address/anyOf/1/type',
          keyword: 'type',
          params: { type: 'null' },
          message: 'must be null',
        },
        {
          instancePath: '/address',
          schemaPath: '#/properties/address/anyOf',
          keyword: 'anyOf',
          params: {},
          message: 'must match a schema in anyOf',
        },
      ],
      'body',
    );
    expect(details).toEqual([{ field: 'address.zip', message: 'must be a string' }]);
  });

  it('words a nullable field with a pattern as one phrase, never "must be must match"', async () => {
    const res = await owner.call('PATCH', '/api/contracts/ctr_missing', { startDate: 'next tuesday' });
    expect(res.statusCode).toBe(400);
    const details = res.json().error.details as Array<{ field: string; message: string }>;
    const message = details.find((d) => d.field === 'startDate')?.message;
    expect(message).toBe(
      'must be a date as YYYY-MM-DD (e.g. 2026-05-01), or an ISO 8601 date-time with an offset (e.g. 2026-05-01T09:00:00Z), or null',
    );
    expect(JSON.stringify(details)).not.toMatch(/must be must/);
  });

  it('tells an invalid API key apart from no credentials (same code)', async () => {
    const none = await h.app.inject({ method: 'GET', url: '/api/customers' });
    const badKey = await h.app.inject({
      method: 'GET',
      url: '/api/customers',
      headers: { authorization: 'Bearer sk_thisKeyDoesNotExist0123456789' },
    });
    const badHeader = await h.app.inject({
      method: 'GET',
      url: '/api/customers',
      headers: { 'x-api-key': 'sk_thisKeyDoesNotExist0123456789' },
    });
    expect([none.statusCode, badKey.statusCode, badHeader.statusCode]).toEqual([401, 401, 401]);
    for (const r of [none, badKey, badHeader]) expect(r.json().error.code).toBe('UNAUTHENTICATED');
    expect(none.json().error.message).toMatch(/Authentication required/);
    expect(badKey.json().error.message).toMatch(/Invalid API key/);
    expect(badHeader.json().error.message).toMatch(/Invalid API key/);
  });

  it('answers 405 METHOD_NOT_ALLOWED with Allow for a known path and a wrong method', async () => {
    const res = await owner.call('PUT', '/api/customers');
    expect(res.statusCode).toBe(405);
    expect(res.json().error.code).toBe('METHOD_NOT_ALLOWED');
    expect(res.headers.allow).toBe('GET, HEAD, POST');
    const one = await owner.call('POST', '/api/customers/cus_x');
    expect(one.statusCode).toBe(405);
    expect(one.headers.allow).toBe('GET, HEAD, PATCH, DELETE');
    const unknown = await owner.call('GET', '/api/nothing-here');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers.allow).toBeUndefined();
  });

  it('names the current plan and the plan needed, not an internal feature key', async () => {
    const pro = await newTenant(h);
    await setPlan(h, pro.organizationId, 'pro');
    const res = await pro.call('GET', '/api/webhooks');
    expect(res.statusCode).toBe(403);
    expect(res.json().error.code).toBe('PLAN_REQUIRED');
    expect(res.json().error.message).toBe('Webhooks require the Business plan; this organization is on the Pro plan');
    const keyed = await newTenant(h);
    const key = await apiKeyCaller(h, keyed);
    await setPlan(h, keyed.organizationId, 'starter');
    const viaKey = await key.call('GET', '/api/customers');
    expect(viaKey.json().error.message).toBe(
      'API keys require the Business plan; this organization is on the Starter plan',
    );
  });

  it('accepts PATCH wherever a partial update is PUT (invoices, estimates, jobs, contracts, templates)', async () => {
    const customer = (await owner.call('POST', '/api/customers', { firstName: 'Pat' })).json().data;
    const invoice = await owner.call('POST', '/api/invoices', {
      customerId: customer.id,
      lineItems: [{ description: 'Mowing', quantity: 1, unitPrice: 50 }],
    });
    expect(invoice.statusCode).toBe(201);
    const id = invoice.json().data.id;
    const patched = await owner.call('PATCH', `/api/invoices/${id}`, { notes: 'gate code 1234' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data.notes).toBe('gate code 1234');
    const put = await owner.call('PUT', `/api/invoices/${id}`, { notes: 'by PUT' });
    expect(put.json().data.notes).toBe('by PUT');
    for (const path of ['/api/estimates/x_1', '/api/jobs/x_1', '/api/contracts/x_1', '/api/contract-templates/x_1']) {
      const res = await owner.call('PATCH', path, {});
      expect([path, res.statusCode]).toEqual([path, 404]);
    }
  });
});
