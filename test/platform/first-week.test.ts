import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailJobs } from '../../src/db/schema/index.js';
import { createCustomer } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { run } from './processes.js';

/*
 * Issue 48: what a new owner tripped on in the first week, one test per defect.
 */
describe('first week: the defects of issue 48', () => {
  let h: Harness;
  let owner: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('refuses a misspelt filter on invoices, estimates and payments instead of answering every record', async () => {
    for (const path of [
      '/api/invoices',
      '/api/estimates',
      '/api/payments',
      '/api/payments/intents',
      '/api/payments/deposits',
    ]) {
      const res = await owner.call('GET', `${path}?stauts=overdue`);
      expect(res.statusCode, path).toBe(400);
      expect(res.json().error.details, path).toEqual([
        { field: 'stauts', message: expect.stringContaining('not an accepted') },
      ]);
    }
  });

  it('refuses an unknown query parameter on every documented read', async () => {
    const reads = h.app.registeredRoutes.filter(
      (r) =>
        r.method === 'GET' &&
        !r.hidden &&
        r.url.startsWith('/api/') &&
        !r.url.startsWith('/api/auth/') &&
        // The customer's mailed link may carry a mail tool's ?utm_… parameters.
        !r.url.startsWith('/api/portal/') &&
        // Intuit's redirect back, whose parameters are Intuit's to add to (quickbooks.schemas.ts).
        r.url !== '/api/integrations/quickbooks/callback',
    );
    expect(reads.length).toBeGreaterThan(60);
    for (const r of reads) {
      const url = `${r.url.replace(/:[a-z_]+/gi, 'x_1')}?zzUnknown=1`;
      const res = await owner.call('GET', url);
      expect(res.statusCode, `${url} ${res.body}`).toBe(400);
      expect(
        res.json().error.details.map((d: { field: string }) => d.field),
        url,
      ).toContain('zzUnknown');
    }
  });

  it('answers 415 to a body sent without Content-Type (plain HTTP, with a length or chunked)', async () => {
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = h.app.server.address() as AddressInfo;
    const post = (path: string, headers: Record<string, string>, chunked: boolean) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
          let body = '';
          res.on('data', (c) => {
            body += String(c);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        if (chunked) req.write('{"firstName":');
        req.end(chunked ? '"Ann"}' : '{"firstName":"Ann"}');
      });
    for (const chunked of [false, true]) {
      const res = await post('/api/customers', { cookie: owner.cookie }, chunked);
      expect(res.status, res.body).toBe(415);
      expect(JSON.parse(res.body).error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      const auth = await post('/api/auth/sign-in/email', {}, chunked);
      expect(auth.status, auth.body).toBe(415);
    }
  });

  it('leads a browser from / to the console and the docs, and /console to /app/', async () => {
    const home = await h.app.inject({ method: 'GET', url: '/' });
    expect(home.statusCode).toBe(200);
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(home.body).toContain('href="/app/"');
    expect(home.body).toContain('href="/docs"');
    for (const url of ['/console', '/console/']) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(302);
      expect(res.headers.location, url).toBe('/app/');
    }
  });

  it('names job activity like contract activity (description), keeping message for existing integrations', async () => {
    const customer = await createCustomer(h, owner);
    const job = await owner.call('POST', '/api/jobs', { customerId: customer.id, scheduledDate: '2026-05-04' });
    expect(job.statusCode, job.body).toBe(201);
    const [entry] = (await owner.call('GET', `/api/jobs/${job.json().data.id}`)).json().data.activity;
    expect(entry.description).toMatch(/\S/);
    expect(entry.message).toBe(entry.description);
  });

  it('names the business in the invitation mail', async () => {
    const res = await owner.call('POST', '/api/invitations', { email: 'new.hire@example.com', role: 'admin' });
    expect(res.statusCode, res.body).toBe(201);
    const [mail] = await h.admin.db.select().from(mailJobs).where(eq(mailJobs.documentId, res.json().data.id));
    expect(mail?.subject).toBe('You have been invited to join Acme Lawn on the field-service CRM');
    expect(mail?.body).toMatch(/^Acme Lawn invited you to join its team as an admin\./);
  });

  it('answers `npm run admin -- --help` with the usage and exit status 0', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const r = run('src/admin.ts', [flag], {});
      expect(await r.exited, r.output()).toBe(0);
      expect(r.output()).toMatch(/usage: npm run admin -- <command>.*set-plan.*migrate/s);
    }
    const wrong = run('src/admin.ts', ['frobnicate'], {});
    expect(await wrong.exited).toBe(2);
  });
});
