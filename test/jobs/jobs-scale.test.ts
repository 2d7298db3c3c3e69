import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobCalendarQuery, jobCountQuery, jobPageQuery } from '../../src/modules/jobs/jobs.service.js';
import type { Page } from '../../src/platform/pagination.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { createCustomer } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/**
 * 200,000 jobs in one organization: the list's first page and a 92-day calendar
 * must be index scans led by (organization_id, scheduled_date), never a Seq Scan
 * on jobs; a cursor page at any depth is a range on the same index. PostgreSQL only: PGlite's planner statistics are not what production sees.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('jobs at scale (PostgreSQL)', () => {
  let h: Harness;
  let owner: TestUser;
  const ROWS = 200_000;

  // The seed is shaped like a real business: ten years of work (~55 jobs a day), rows
  // written roughly in date order (booked up to two weeks ahead), a few assigned crews.
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { name: 'Big Lawn' });
    const small = await newTenant(h, { name: 'Small Lawn' });
    const customer = await createCustomer(h, owner);
    const other = await createCustomer(h, small);
    const seed = async (orgId: string, customerId: string, n: number) =>
      h.admin.db.execute(sql`
        INSERT INTO jobs (id, organization_id, customer_id, status, scheduled_date, assigned_to, services)
        SELECT 'job_seed_' || ${orgId} || '_' || g, ${orgId}, ${customerId},
               (ARRAY['scheduled','in_progress','completed','canceled','on_hold'])[1 + g % 5],
               DATE '2017-01-01' + (g * 3650 / ${n})::int + (g % 14),
               CASE WHEN g % 7 = 0 THEN ARRAY['usr_crew_' || (g % 13)] ELSE '{}'::text[] END,
               ARRAY['Mowing']
        FROM generate_series(1, ${n}) AS g`);
    await seed(owner.organizationId, customer.id, ROWS);
    await seed(small.organizationId, other.id, 2_000);
    await h.admin.db.execute(sql`VACUUM ANALYZE jobs`);
  }, 240_000);
  afterAll(async () => h?.close());

  async function plan(
    build: (ctx: Parameters<Parameters<typeof inTenant>[3]>[0]) => { toSQL(): { sql: string; params: unknown[] } },
  ) {
    const pool = h.admin.pool;
    if (!pool) throw new Error('PostgreSQL only');
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query("SELECT set_config('role', 'crm_app', true), set_config('app.organization_id', $1, true)", [
        owner.organizationId,
      ]);
      // Build the exact SQL the service runs, then EXPLAIN it with the same parameters.
      const query = await inTenant(
        h.database.db,
        owner.organizationId,
        { kind: 'user', id: owner.userId, role: 'owner' },
        async (ctx) => build(ctx).toSQL(),
      );
      const res = await client.query(`EXPLAIN ${query.sql}`, query.params);
      await client.query('ROLLBACK');
      return res.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    } finally {
      client.release();
    }
  }

  const page: Page = { page: 1, limit: 50, offset: 0, startingAfter: undefined, includeTotal: false };

  it('the default list page uses the organization/date index', async () => {
    const text = await plan((ctx) => jobPageQuery(ctx, {}, {}, page));
    expect(text).toMatch(/Index (Only )?Scan using jobs_org_date_idx/);
    expect(text).not.toMatch(/Seq Scan on jobs/);
  });

  it('a date-filtered list page and a status filter use an index', async () => {
    const dated = await plan((ctx) => jobPageQuery(ctx, {}, { from: '2025-03-01', to: '2025-03-31' }, page));
    expect(dated).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
    expect(dated).not.toMatch(/Seq Scan on jobs/);
    const byStatus = await plan((ctx) => jobPageQuery(ctx, { status: 'on_hold' }, {}, page));
    expect(byStatus).not.toMatch(/Seq Scan on jobs/);
  });

  // A cursor page must be a range on the index (ROW(...) > ROW(...) in the Index Cond), not a
  // walk from the start of the organization's rows that filters up to the cursor.
  const cursorOf = (orgId: string): Page => ({ ...page, startingAfter: `job_seed_${orgId}_150000` });
  const rangeCond = /Index Cond: \(.*ROW\(scheduled_date, created_at, id\) > ROW\(/;

  it('every cursor page, filtered or not, is a range scan of the index in list order', async () => {
    const cases: Array<[Parameters<typeof jobPageQuery>[1], Parameters<typeof jobPageQuery>[2], string]> = [
      [{}, {}, 'jobs_org_date_idx'],
      [{}, { from: '2025-03-01', to: '2025-12-31' }, 'jobs_org_date_idx'],
      [{ status: 'on_hold' }, {}, 'jobs_org_status_date_idx'],
      [{ customerId: 'cus_any' }, {}, 'jobs_org_customer_date_idx'],
    ];
    for (const [filters, range, index] of cases) {
      const label = JSON.stringify({ filters, range });
      const first = await plan((ctx) => jobPageQuery(ctx, filters, range, page));
      expect(first, label).toMatch(new RegExp(`Index (Only )?Scan using ${index}`));
      expect(first, label).not.toMatch(/Seq Scan on jobs|Sort/);
      const cursor = await plan((ctx) => jobPageQuery(ctx, filters, range, cursorOf(owner.organizationId)));
      expect(cursor, label).toMatch(new RegExp(`Index (Only )?Scan using ${index}`));
      expect(cursor, label).toMatch(rangeCond);
      expect(cursor, label).not.toMatch(/Seq Scan on jobs|Sort/);
    }
  });

  it('walks a cursor page deep in the list through the API', async () => {
    const cursorId = `job_seed_${owner.organizationId}_150000`;
    const cursor = (await owner.call('GET', `/api/jobs/${cursorId}`)).json().data;
    const res = await owner.call('GET', `/api/jobs?limit=3&startingAfter=${cursorId}`);
    expect(res.statusCode).toBe(200);
    const rows = res.json().data as Array<{ id: string; scheduledDate: string }>;
    expect(rows.length).toBe(3);
    for (const row of rows) expect(row.scheduledDate >= cursor.scheduledDate).toBe(true);
    expect(rows.map((r) => r.id)).not.toContain(cursorId);
    expect(res.headers.link).toContain(`startingAfter=${rows[2]?.id}`);
  });

  it('a 92-day calendar uses the organization/date index', async () => {
    const text = await plan((ctx) => jobCalendarQuery(ctx, {}, { from: '2025-01-01', to: '2025-04-02' }));
    expect(text).toMatch(/jobs_org_date_idx/);
    expect(text).not.toMatch(/Seq Scan on jobs/);
  });

  it('the assignee filter uses the GIN index', async () => {
    const text = await plan((ctx) => jobPageQuery(ctx, { assignedTo: 'usr_crew_3' }, {}, page));
    expect(text).not.toMatch(/Seq Scan on jobs/);
  });

  // Counting the whole organization reads all its rows whichever way (PostgreSQL may well
  // prefer a parallel Seq Scan); that is why the total is only counted for includeTotal=true.
  // A filtered count reads only the matching range of an index.
  it("a filtered list's total (includeTotal=true) reads an index range, not the table", async () => {
    const text = await plan((ctx) => jobCountQuery(ctx, { customerId: 'cus_any' }, {}));
    expect(text).toMatch(/Index Only Scan|Bitmap Index Scan/);
    expect(text).not.toMatch(/Seq Scan on jobs/);
    const dated = await plan((ctx) => jobCountQuery(ctx, {}, { from: '2025-03-01', to: '2025-03-31' }));
    expect(dated).toMatch(/Index Only Scan|Bitmap Index Scan/);
    expect(dated).not.toMatch(/Seq Scan on jobs/);
  });

  it('answers the list and the calendar through the API on the large organization', async () => {
    const res = await owner.call('GET', '/api/jobs?limit=5&includeTotal=true');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-total-count']).toBe(String(ROWS));
    expect(res.json().data[0].scheduledDate).toBe('2017-01-01');
    const cal = await owner.call('GET', '/api/jobs/calendar?startDate=2025-01-01&endDate=2025-01-03');
    expect(cal.statusCode).toBe(200);
    expect(cal.json().data.map((d: { date: string }) => d.date)).toEqual(['2025-01-01', '2025-01-02', '2025-01-03']);
  });
});
