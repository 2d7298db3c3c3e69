import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/**
 * "Bad input gets a clear 4xx, never a 500", checked over every registered /api
 * route at once (routes added later are covered automatically): unknown and
 * malformed ids, bodies of every wrong shape, hostile query strings.
 */
const ids = ['nope', 'cus_0000000000000000000000000', "x'; DROP TABLE customers; --", '%00', 'a'.repeat(64)];
const BODIES: unknown[] = [
  {},
  [],
  'text',
  42,
  null,
  { id: 'x', organizationId: 'y', status: 'paid', total: -1 },
  { amount: 1e308, quantity: -0.0001, unitPrice: 'NaN', lineItems: [{}], events: ['nope'], url: 'ftp://x' },
  { startDate: '2026-02-30', endDate: 'yesterday', scheduledDate: '99999-01-01', timezone: 'Mars/Base' },
];
const QUERIES = [
  'page=0',
  'limit=1000',
  'page=-1&limit=abc',
  'startDate=2026-13-01&endDate=x',
  'status=UNKNOWN',
  'search=%25%5F%27',
];

describe('no route answers 5xx to bad input', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    // Real records too, so garbage bodies also reach the services behind existing ids.
    const customer = await owner.call('POST', '/api/customers', { firstName: 'Robust', email: 'r@example.com' });
    const customerId = customer.json().data.id as string;
    const invoice = await owner.call('POST', '/api/invoices', {
      customerId,
      lineItems: [{ description: 'Mow', quantity: 1, unitPrice: 40 }],
    });
    const job = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: '2026-06-01' });
    ids.push(customerId, invoice.json().data.id, job.json().data.id);
  });
  afterAll(async () => h?.close());

  // Every route × 5 ids × 8 bodies or 6 queries: the budget grows with the route table (crew tracking and equipment add 31).
  it('survives garbage ids, bodies and query strings on every /api route', { timeout: 180_000 }, async () => {
    const routes = h.app.registeredRoutes.filter(
      (r) =>
        r.url.startsWith('/api/') && !r.url.startsWith('/api/auth/') && r.method !== 'HEAD' && r.method !== 'OPTIONS',
    );
    expect(routes.length).toBeGreaterThan(60);
    const failures: string[] = [];
    for (const route of routes) {
      for (const id of ids) {
        const url = route.url.replace(/:[A-Za-z_]+/g, encodeURIComponent(id));
        const calls =
          route.method === 'GET' || route.method === 'DELETE'
            ? QUERIES.map((q) => owner.call(route.method, `${url}?${q}`))
            : BODIES.map((b) => owner.call(route.method, url, b));
        for (const res of await Promise.all(calls)) {
          // PDF routes answer a binary body (a real invoice id is among the ids); everything else is JSON.
          if (res.statusCode >= 500)
            failures.push(`${route.method} ${url} → ${res.statusCode} ${res.body.slice(0, 120)}`);
          else if (res.statusCode !== 204 && res.headers['content-type'] !== 'application/pdf') {
            expect(res.json(), `${route.method} ${url}`).toHaveProperty(res.statusCode < 300 ? 'data' : 'error');
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // Every route × id × body: the sweep grows with each module (PDF routes render real documents).
  });
});
