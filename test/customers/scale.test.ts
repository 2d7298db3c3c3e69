import { PgDialect } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerListQuery, listCustomers } from '../../src/modules/customers/customers.service.js';
import { pageOf } from '../../src/platform/pagination.js';
import { type Ctx, inTenant } from '../../src/platform/tenancy.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

const SEEDED = 100_000;

/*
 * Plans at scale, on PostgreSQL only (PGlite's planner is the same, but seeding
 * 100k rows there costs more than it tells). The plans are taken as the
 * application role with the tenant set, exactly as requests run: under FORCE
 * ROW LEVEL SECURITY, which is what decides whether an index may serve a
 * condition at all. The tables are seeded and ANALYZEd, so the planner chooses
 * freely; no enable_seqscan games.
 */
describe.skipIf(process.env.TEST_DATABASE_URL === undefined)('customer list and search plans at scale', () => {
  let h: Harness;
  let owner: TestUser;
  const actor = { kind: 'user' as const, id: 'u', role: 'owner' as const };

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    const pool = h.admin.pool as NonNullable<Harness['database']['pool']>;
    // Search text in the service's format: name, email, phone digits, separated by U+001F.
    await pool.query(
      `INSERT INTO customers (id, organization_id, first_name, last_name, email, phone, search_text, tags, status, created_at)
       SELECT 'cus_seed' || lpad(g::text, 6, '0'), $1, 'First' || g, 'Last' || substr(md5(g::text), 1, 8),
              'user' || g || '@example.com', '555' || lpad(g::text, 7, '0'),
              lower('First' || g || ' Last' || substr(md5(g::text), 1, 8)) || chr(31) || 'user' || g || '@example.com'
                || chr(31) || '555' || lpad(g::text, 7, '0'),
              CASE WHEN g % 1000 = 0 THEN ARRAY['vip'] WHEN g % 100 = 0 THEN ARRAY['regular'] ELSE '{}'::text[] END,
              CASE WHEN g % 10 = 5 THEN 'inactive' ELSE 'active' END,
              now() - g * interval '1 minute'
       FROM generate_series(1, ${SEEDED}) AS g`,
      [owner.organizationId],
    );
    // A shared table holds other tenants too; a smaller one sits beside ours.
    const neighbour = await newTenant(h, { name: 'Neighbour' });
    await pool.query(
      `INSERT INTO customers (id, organization_id, first_name, search_text, created_at)
       SELECT 'cus_nb' || lpad(g::text, 6, '0'), $1, 'N' || g, 'n' || g, now() - g * interval '1 minute'
       FROM generate_series(1, ${SEEDED / 5}) AS g`,
      [neighbour.organizationId],
    );
    await pool.query(
      `INSERT INTO customer_search (customer_id, organization_id, search_text, tags)
       SELECT id, organization_id, search_text, tags FROM customers`,
    );
    await pool.query('VACUUM ANALYZE customers');
    await pool.query('VACUUM ANALYZE customer_search');
  }, 240_000);
  afterAll(async () => h?.close());

  /**
   * The plans of the list query AND of the statements it runs inside customer_search's
   * tenant-bound functions (auto_explain with nested statements, reported to this
   * client as notices), as the application role with the tenant set.
   */
  async function plan(filter: Parameters<typeof customerListQuery>[1], page = pageOf({})) {
    const query = await inTenant(h.database.db, owner.organizationId, actor, async (ctx: Ctx) =>
      new PgDialect().sqlToQuery(customerListQuery(ctx, filter, page)),
    );
    const client = await (h.admin.pool as pg.Pool).connect();
    const plans: PlanNode[] = [];
    const onNotice = (n: { message?: string }) => {
      const json = n.message?.split('plan:\n')[1];
      if (json) plans.push((JSON.parse(json) as { Plan: PlanNode }).Plan);
    };
    client.on('notice', onNotice);
    try {
      await client.query(`LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
        SET auto_explain.log_nested_statements = on; SET auto_explain.log_format = json;
        SET auto_explain.log_level = notice`);
      await client.query('BEGIN');
      await client.query("SELECT set_config('role', 'crm_app', true), set_config('app.organization_id', $1, true)", [
        owner.organizationId,
      ]);
      await client.query(query.sql, query.params);
      await client.query('ROLLBACK');
    } finally {
      client.off('notice', onNotice);
      client.release(true);
    }
    if (plans.length === 0) throw new Error('auto_explain reported no plan');
    return plans.flatMap(nodesOf);
  }

  const seqScans = (nodes: PlanNode[]) =>
    nodes.filter((n) => n['Node Type'] === 'Seq Scan').map((n) => n['Relation Name']);
  const indexes = (nodes: PlanNode[]) => nodes.map((n) => n['Index Name']).filter(Boolean);

  it('serves the first page from the partial (organization, createdAt, id) index', async () => {
    const nodes = await plan({});
    expect(seqScans(nodes)).toEqual([]);
    expect(indexes(nodes)).toContain('customers_org_live_created_idx');
    // The page walks the index backwards (newest first); no count unless includeTotal asks.
    expect(nodes.map((n) => n['Node Type'])).toContain('Index Scan');
    const page = await inTenant(h.database.db, owner.organizationId, actor, (ctx) =>
      listCustomers(ctx, {}, pageOf({ limit: 50, includeTotal: 'true' })),
    );
    expect(page.total).toBe(SEEDED);
    expect(page.rows[0]?.id).toBe('cus_seed000001');
  });

  it('serves a deep page from the same index', async () => {
    const nodes = await plan({}, pageOf({ page: 300, limit: 50 }));
    expect(seqScans(nodes)).toEqual([]);
    const cursor = await plan({}, pageOf({ startingAfter: 'cus_seed000100', limit: 50 }));
    expect(seqScans(cursor)).toEqual([]);
    expect(indexes(cursor)).toContain('customers_org_live_created_idx');
  });

  // A cursor page is a range on the index (the row comparison is an Index Cond), so the row
  // at 90,000 costs what the first page does; likewise inside a status filter.
  const indexConds = (nodes: PlanNode[]) => nodes.map((n) => n['Index Cond'] ?? '').join(' ');

  it('serves a cursor page deep in the list as an index range, filtered by status or not', async () => {
    const deep = await plan({}, pageOf({ startingAfter: 'cus_seed090000', limit: 50 }));
    expect(seqScans(deep)).toEqual([]);
    expect(indexes(deep)).toContain('customers_org_live_created_idx');
    expect(indexConds(deep)).toMatch(/ROW\(c?\.?created_at, c?\.?id\) < ROW\(/);
    expect(deep.map((n) => n['Node Type'])).not.toContain('Sort');
    for (const page of [pageOf({}), pageOf({ startingAfter: 'cus_seed090000' })]) {
      const nodes = await plan({ status: 'inactive' }, page);
      expect(seqScans(nodes)).toEqual([]);
      expect(indexes(nodes)).toContain('customers_org_live_status_created_idx');
      expect(nodes.map((n) => n['Node Type'])).not.toContain('Sort');
    }
    const walked = await inTenant(h.database.db, owner.organizationId, actor, (ctx) =>
      listCustomers(ctx, {}, pageOf({ startingAfter: 'cus_seed090000', limit: 3 })),
    );
    expect(walked.rows.map((c) => c.id)).toEqual(['cus_seed090001', 'cus_seed090002', 'cus_seed090003']);
    expect(walked.hasMore).toBe(true);
  });

  it('serves a search from the trigram index, by text and by phone digits', async () => {
    for (const search of ['user12345@', 'FIRST12345 last', '(555) 001-2345']) {
      const nodes = await plan({ search });
      expect(seqScans(nodes), search).toEqual([]);
      expect(indexes(nodes), search).toContain('customer_search_trgm_idx');
    }
    const found = await inTenant(h.database.db, owner.organizationId, actor, (ctx) =>
      listCustomers(ctx, { search: '(555) 001-2345' }, pageOf({ includeTotal: 'true' })),
    );
    expect(found.rows.map((c) => c.id)).toEqual(['cus_seed012345']);
    expect(found.total).toBe(1);
  });

  it('filters by tag (and status) through the tags index', async () => {
    const nodes = await plan({ tag: 'vip', status: 'active' });
    expect(seqScans(nodes)).toEqual([]);
    expect(
      indexes(nodes),
      JSON.stringify(nodes.map((n) => [n['Node Type'], n['Index Name'], n['Index Cond']])),
    ).toContain('customer_search_tags_idx');
    const vip = await inTenant(h.database.db, owner.organizationId, actor, (ctx) =>
      listCustomers(ctx, { tag: 'vip' }, pageOf({ includeTotal: 'true' })),
    );
    expect(vip.total).toBe(SEEDED / 1000);
    // A common tag (1 %) may instead walk the list index and probe customer_search by key;
    // either way no table is read in full, on the first page or on a cursor page.
    for (const page of [pageOf({}), pageOf({ startingAfter: 'cus_seed090000' })]) {
      expect(seqScans(await plan({ tag: 'regular' }, page))).toEqual([]);
      expect(seqScans(await plan({ tag: 'vip' }, page))).toEqual([]);
    }
  });
});
