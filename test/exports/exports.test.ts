import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataExports } from '../../src/db/schema/index.js';
import { csvColumns } from '../../src/modules/exports/exports.format.js';
import { EXPORT_PAGE_SIZE, runNextExport, sweepExports } from '../../src/modules/exports/exports.tasks.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { ndjson, parseCsv, unzip } from './helpers.js';

/*
 * Bulk export (operations.md §7): 202, the worker's archive, its contents equal to
 * what the list routes answer (REST shape, keyset order, soft-deleted rows left out,
 * never another organization's rows), CSV quoting and flattening, 409 and 410.
 */

const TRICKY = 'Gate code 1,2 — say "hello"\nthen ring twice';

let h: Harness;
let owner: TestUser;
let admin: TestUser;
let other: TestUser;
let otherCustomerId: string;

async function run() {
  return runNextExport(h.database, h.config.exportDir);
}

async function exportRow(id: string) {
  const [row] = await h.admin.db.select().from(dataExports).where(eq(dataExports.id, id));
  return row as typeof dataExports.$inferSelect;
}

async function fileNameOf(id: string) {
  return (await exportRow(id)).fileName as string;
}

async function download(user: TestUser, id: string) {
  const res = await user.call('GET', `/api/exports/${id}/download`);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toBe('application/zip');
  return unzip(res.rawPayload);
}

async function listAll(user: TestUser, path: string) {
  const res = await user.call('GET', `${path}?limit=100`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Array<Record<string, unknown>>;
}

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  admin = await addMember(h, owner, 'admin');
  other = await newTenant(h, { name: 'Other Org' });
  const c1 = (await owner.call('POST', '/api/customers', { firstName: 'Ann', lastName: 'Lee', notes: TRICKY })).json()
    .data;
  await owner.call('POST', '/api/customers', { firstName: 'Bo', company: 'Bo, "The" Mower', tags: ['vip', 'hoa'] });
  const gone = (await owner.call('POST', '/api/customers', { firstName: 'Deleted' })).json().data;
  expect((await owner.call('DELETE', `/api/customers/${gone.id}`)).statusCode).toBe(204);
  const inv = await owner.call('POST', '/api/invoices', {
    customerId: c1.id,
    lineItems: [{ description: 'Mowing, edging', quantity: 1.5, unitPrice: 40.25 }],
  });
  expect(inv.statusCode, inv.body).toBe(201);
  const job = await owner.call('POST', '/api/jobs', {
    customerId: c1.id,
    scheduledDate: '2026-05-01',
    services: ['Mowing', 'Edging, front'],
    notes: TRICKY,
  });
  expect(job.statusCode, job.body).toBe(201);
  // A closed time entry with locations: objects become dotted CSV columns.
  const [m] = (
    (await h.admin.db.execute(
      sql`SELECT id, user_id FROM members WHERE organization_id = ${owner.organizationId} LIMIT 1`,
    )) as unknown as { rows: Array<{ id: string; user_id: string }> }
  ).rows;
  await h.admin.db.execute(sql`INSERT INTO time_entries (id, organization_id, member_id, user_id, type, started_at, ended_at, start_location)
    VALUES ('te_export1', ${owner.organizationId}, ${m?.id}, ${m?.user_id}, 'work', '2026-05-01T12:00:00Z', '2026-05-01T13:30:00Z',
      '{"lat": 40.5, "lng": -73.25}'::jsonb)`);
  otherCustomerId = (await other.call('POST', '/api/customers', { firstName: 'Stranger' })).json().data.id;
});
afterAll(async () => h?.close());

describe('POST /api/exports', () => {
  it('answers 202 queued, 409 on download before completion, then the worker completes it', async () => {
    const res = await owner.call('POST', '/api/exports', { format: 'ndjson' });
    expect(res.statusCode, res.body).toBe(202);
    const queued = res.json().data;
    expect(queued).toMatchObject({
      status: 'queued',
      format: 'ndjson',
      progress: { rows: 0, totalRows: null, percent: 0 },
      sizeBytes: null,
      expiresAt: null,
    });
    expect(queued.resources).toContain('customers');
    expect(queued.resources).toContain('time-entries');

    const early = await owner.call('GET', `/api/exports/${queued.id}/download`);
    expect(early.statusCode).toBe(409);
    expect(early.json().error.code).toBe('INVALID_STATE');

    expect(await run()).toBe(1);
    const done = (await owner.call('GET', `/api/exports/${queued.id}`)).json().data;
    expect(done.status).toBe('completed');
    expect(done.progress.percent).toBe(100);
    expect(done.progress.rows).toBe(done.progress.totalRows);
    expect(done.sizeBytes).toBeGreaterThan(0);
    const days = (Date.parse(done.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const list = await owner.call('GET', '/api/exports');
    expect(list.json().data.map((e: { id: string }) => e.id)).toContain(queued.id);

    const files = await download(admin, queued.id);
    expect([...files.keys()].sort()).toEqual(
      [...queued.resources.map((r: string) => `${r}.ndjson`), 'manifest.json'].sort(),
    );
    // Every file equals what the list route answers, in its order; soft-deleted customers left out.
    for (const [resource, path] of [
      ['customers', '/api/customers'],
      ['invoices', '/api/invoices'],
      ['jobs', '/api/jobs'],
      ['time-entries', '/api/crew-tracking/time-entries'],
      ['payments', '/api/payments'],
    ] as const) {
      expect(ndjson(files.get(`${resource}.ndjson`) ?? ''), resource).toEqual(await listAll(owner, path));
    }
    const customers = ndjson(files.get('customers.ndjson') ?? '') as Array<{ firstName: string; notes: string }>;
    expect(customers.map((c) => c.firstName).sort()).toEqual(['Ann', 'Bo']);
    expect(customers.find((c) => c.firstName === 'Ann')?.notes).toBe(TRICKY);
    const [invoice] = ndjson(files.get('invoices.ndjson') ?? '') as Array<{ total: number }>;
    expect(invoice?.total).toBe(60.38); // money as decimals
    // Nothing of the other organization anywhere in the archive.
    for (const text of files.values()) {
      expect(text).not.toContain(otherCustomerId);
      expect(text).not.toContain(other.organizationId);
    }
    const manifest = JSON.parse(files.get('manifest.json') ?? '{}');
    expect(manifest.files.find((f: { resource: string }) => f.resource === 'customers').rows).toBe(2);
  });

  it('writes CSV: quoted commas, quotes and newlines, dotted columns, lists of words joined by "; "', async () => {
    const res = await owner.call('POST', '/api/exports', {
      format: 'csv',
      resources: ['jobs', 'customers', 'time-entries'],
    });
    expect(res.statusCode, res.body).toBe(202);
    // Resources in the registry's order, whatever the request's.
    expect(res.json().data.resources).toEqual(['customers', 'jobs', 'time-entries']);
    await run();
    const files = await download(owner, res.json().data.id);
    expect([...files.keys()].sort()).toEqual(['customers.csv', 'jobs.csv', 'manifest.json', 'time-entries.csv']);

    const [header, ...rows] = parseCsv(files.get('customers.csv') ?? '');
    const api = await listAll(owner, '/api/customers');
    expect(rows).toHaveLength(api.length);
    const col = (name: string) => (header as string[]).indexOf(name);
    const ann = rows.find((r) => r[col('firstName')] === 'Ann') as string[];
    expect(ann[col('notes')]).toBe(TRICKY);
    const bo = rows.find((r) => r[col('firstName')] === 'Bo') as string[];
    expect(bo[col('company')]).toBe('Bo, "The" Mower');
    expect(files.get('customers.csv')).toContain('"Bo, ""The"" Mower"');
    // Issue 48: tags were written as JSON (`[]`, `["vip","hoa"]`); a spreadsheet reads words.
    expect(bo[col('tags')]).toBe('vip; hoa');
    expect(ann[col('tags')]).toBe('');

    const [jobHeader, jobRow] = parseCsv(files.get('jobs.csv') ?? '');
    const jh = jobHeader as string[];
    expect((jobRow as string[])[jh.indexOf('services')]).toBe('Mowing; Edging, front');
    expect((jobRow as string[])[jh.indexOf('notes')]).toBe(TRICKY);

    const [teHeader, teRow] = parseCsv(files.get('time-entries.csv') ?? '');
    const th = teHeader as string[];
    expect(th).toContain('startLocation.lat');
    expect(th).toContain('startLocation.lng');
    expect((teRow as string[])[th.indexOf('startLocation.lat')]).toBe('40.5');
    expect((teRow as string[])[th.indexOf('endLocation.lat')]).toBe('');
    expect((teRow as string[])[th.indexOf('startedAt')]).toBe('2026-05-01T12:00:00.000Z');
  });

  it("exports an organization with nothing: empty files, and never another organization's rows", async () => {
    const res = await other.call('POST', '/api/exports', { format: 'ndjson', resources: ['invoices', 'customers'] });
    await run();
    const files = await download(other, res.json().data.id);
    expect(files.get('invoices.ndjson')).toBe('');
    const customers = ndjson(files.get('customers.ndjson') ?? '') as Array<{ id: string }>;
    expect(customers.map((c) => c.id)).toEqual([otherCustomerId]);
    const view = (await other.call('GET', `/api/exports/${res.json().data.id}`)).json().data;
    expect(view.progress).toEqual({ rows: 1, totalRows: 1, percent: 100 });
  });

  it('answers 400 to an unknown resource, a missing format, duplicates or extra fields, writing nothing', async () => {
    const before = (await owner.call('GET', '/api/exports')).json().data.length;
    for (const body of [
      { format: 'ndjson', resources: ['customers', 'secrets'] },
      { format: 'ndjson', resources: ['__proto__'] },
      { resources: ['customers'] },
      { format: 'xml' },
      { format: 'csv', resources: [] },
      { format: 'csv', resources: ['jobs', 'jobs'] },
      { format: 'csv', extra: true },
    ]) {
      const res = await owner.call('POST', '/api/exports', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
    expect((await owner.call('GET', '/api/exports')).json().data.length).toBe(before);
  });

  it('answers 410 after expiry; the sweep removes the file', async () => {
    const res = await owner.call('POST', '/api/exports', { format: 'csv', resources: ['customers'] });
    const id = res.json().data.id as string;
    await run();
    const file = join(h.config.exportDir, await fileNameOf(id));
    expect(existsSync(file)).toBe(true);
    await h.admin.db.execute(sql`UPDATE data_exports SET expires_at = now() - interval '1 minute' WHERE id = ${id}`);
    const gone = await owner.call('GET', `/api/exports/${id}/download`);
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error.code).toBe('GONE');
    expect(await sweepExports(h.database, h.config.exportDir)).toBeGreaterThanOrEqual(1);
    expect(existsSync(file)).toBe(false);
    expect((await owner.call('GET', `/api/exports/${id}/download`)).statusCode).toBe(410);
    // The record stays, completed, so the owner sees what happened.
    expect((await owner.call('GET', `/api/exports/${id}`)).json().data.status).toBe('completed');
  });

  it("resumes after the row before when the page's last row was deleted meanwhile: nothing skipped, nothing twice", async () => {
    const user = await newTenant(h, { name: 'Live Org' });
    const customer = (await user.call('POST', '/api/customers', { firstName: 'Many' })).json().data;
    await h.admin.db.execute(sql`INSERT INTO jobs (id, organization_id, customer_id, status, scheduled_date)
      SELECT 'job_live_' || lpad(g::text, 5, '0'), ${user.organizationId}, ${customer.id}, 'scheduled', DATE '2026-01-01' + g % 50
      FROM generate_series(1, ${EXPORT_PAGE_SIZE * 2 + 100}) g`);
    const res = await user.call('POST', '/api/exports', { format: 'ndjson', resources: ['jobs'] });
    let deleted: string | undefined;
    await runNextExport(h.database, h.config.exportDir, {
      onPage: async (_rows, lastId) => {
        if (deleted || !lastId) return;
        deleted = lastId;
        await h.admin.db.execute(sql`DELETE FROM jobs WHERE id = ${lastId}`);
      },
    });
    const view = (await user.call('GET', `/api/exports/${res.json().data.id}`)).json().data;
    expect(view.status).toBe('completed');
    const files = await download(user, view.id);
    const ids = (ndjson(files.get('jobs.ndjson') ?? '') as Array<{ id: string }>).map((j) => j.id);
    expect(ids).toHaveLength(EXPORT_PAGE_SIZE * 2 + 100);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain(deleted); // written before it was deleted
  });

  it("a slow run taken for dead and queued again changes neither the new run's row nor its archive", async () => {
    const user = await newTenant(h, { name: 'Slow Org' });
    const customer = (await user.call('POST', '/api/customers', { firstName: 'Slow' })).json().data;
    await h.admin.db.execute(sql`INSERT INTO jobs (id, organization_id, customer_id, status, scheduled_date)
      SELECT 'job_slow_' || lpad(g::text, 5, '0'), ${user.organizationId}, ${customer.id}, 'scheduled', DATE '2026-01-01'
      FROM generate_series(1, ${EXPORT_PAGE_SIZE + 10}) g`);
    const id = (await user.call('POST', '/api/exports', { format: 'ndjson', resources: ['jobs'] })).json().data
      .id as string;
    let current: { row: typeof dataExports.$inferSelect; archive: Buffer } | undefined;
    // Run 1 writes its first page, then stalls: the sweep takes it for dead, run 2 does the whole export.
    await runNextExport(h.database, h.config.exportDir, {
      onPage: async () => {
        if (current) return;
        // A job run 1 has already written: run 2's archive leaves it out.
        await h.admin.db.execute(sql`DELETE FROM jobs WHERE id = 'job_slow_00001'`);
        await h.admin.db.execute(
          sql`UPDATE data_exports SET updated_at = now() - interval '11 minutes' WHERE id = ${id}`,
        );
        expect(await sweepExports(h.database, h.config.exportDir)).toBeGreaterThanOrEqual(1);
        expect((await exportRow(id)).status).toBe('queued');
        expect(await run()).toBe(1);
        const row = await exportRow(id);
        expect(row).toMatchObject({ status: 'completed', attempts: 2, rows: EXPORT_PAGE_SIZE + 9 });
        current = { row, archive: readFileSync(join(h.config.exportDir, row.fileName as string)) };
      },
    });
    // Run 1 went on and finished: the row and the archive are still run 2's.
    if (!current) throw new Error('the hook never ran');
    expect(await exportRow(id)).toEqual(current.row);
    const path = join(h.config.exportDir, current.row.fileName as string);
    expect(readFileSync(path).equals(current.archive)).toBe(true);
    const ids = (ndjson((await download(user, id)).get('jobs.ndjson') ?? '') as Array<{ id: string }>).map((j) => j.id);
    expect(ids).toHaveLength(EXPORT_PAGE_SIZE + 9);
    expect(ids).not.toContain('job_slow_00001');
    // Run 1 left no file behind.
    expect(readdirSync(h.config.exportDir).filter((f) => f.startsWith(id))).toEqual([current.row.fileName]);
  });

  it('has nothing to do when nothing is queued', async () => {
    expect(await run()).toBe(0);
  });
});

describe('CSV columns', () => {
  it('flattens nested objects (nullable too) to dotted names and keeps arrays whole', () => {
    const schema = {
      type: 'object',
      properties: {
        id: { type: 'string' },
        billing: {
          anyOf: [
            {
              type: 'object',
              properties: { city: { type: 'string' }, geo: { type: 'object', properties: { lat: {} } } },
            },
            { type: 'null' },
          ],
        },
        tags: { type: 'array', items: { type: 'string' } },
      },
    };
    expect(csvColumns(schema)).toEqual(['id', 'billing.city', 'billing.geo.lat', 'tags']);
  });
});
