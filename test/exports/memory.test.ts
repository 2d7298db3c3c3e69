import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runNextExport } from '../../src/modules/exports/exports.tasks.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Memory stays flat: 200,000 rows (seeded by SQL) exported while the heap is sampled
 * after a forced collection every few pages, so the figure is what the export keeps
 * alive, not garbage waiting for the collector. The growth over the baseline taken
 * just before must stay under 50 MB.
 */

const ROWS = 200_000;
const LIMIT_BYTES = 50 * 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let h: Harness;
let owner: TestUser;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  const customer = (await owner.call('POST', '/api/customers', { firstName: 'Bulk' })).json().data;
  await h.admin.db.execute(sql`INSERT INTO jobs (id, organization_id, customer_id, status, scheduled_date, services, notes)
    SELECT 'job_mem_' || lpad(g::text, 7, '0'), ${owner.organizationId}, ${customer.id},
           (ARRAY['scheduled','in_progress','completed','canceled','on_hold'])[1 + g % 5],
           DATE '2026-01-01' + (g % 365), ARRAY['Mowing', 'Edging'], 'Gate code ' || g || ', side door'
    FROM generate_series(1, ${ROWS}) AS g`);
  await h.admin.db.execute(sql`ANALYZE jobs`);
}, 300_000);
afterAll(async () => h?.close());

it('exports 200,000 rows with the heap growing less than 50 MB', async () => {
  const res = await owner.call('POST', '/api/exports', { format: 'csv', resources: ['jobs'] });
  expect(res.statusCode, res.body).toBe(202);
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let peak = baseline;
  let pages = 0;
  const started = Date.now();
  await runNextExport(h.database, h.config.exportDir, {
    onPage: () => {
      if (++pages % 25 !== 0) return;
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    },
  });
  const seconds = (Date.now() - started) / 1000;
  const view = (await owner.call('GET', `/api/exports/${res.json().data.id}`)).json().data;
  expect(view.status).toBe('completed');
  expect(view.progress).toEqual({ rows: ROWS, totalRows: ROWS, percent: 100 });
  const growth = peak - baseline;
  console.log(
    `export of ${ROWS} rows: ${Math.round(ROWS / seconds)} rows/s, heap growth ${(growth / 1024 / 1024).toFixed(1)} MB, zip ${view.sizeBytes} bytes`,
  );
  expect(growth).toBeLessThan(LIMIT_BYTES);
}, 600_000);
