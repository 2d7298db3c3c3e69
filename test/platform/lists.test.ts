import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Ctx, inTenant } from '../../src/platform/tenancy.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * The list contract (operations.md §1) through the API: walks by Link rel="next"
 * in both styles, the refusals, totals on request, filters kept in links.
 */

const relsOf = (res: LightMyRequestResponse): Record<string, string> =>
  Object.fromEntries(
    String(res.headers.link ?? '')
      .split(', ')
      .filter(Boolean)
      .map((part) => {
        const m = /^<([^>]+)>; rel="(\w+)"$/.exec(part);
        if (!m) throw new Error(`bad Link part: ${part}`);
        return [m[2], m[1]];
      }),
  );

/** Follows rel="next" from `url` to the end; returns every id seen and every page's response. */
async function walk(user: TestUser, url: string) {
  const ids: string[] = [];
  const pages: LightMyRequestResponse[] = [];
  let next: string | undefined = url;
  while (next !== undefined) {
    const res = await user.call('GET', next);
    expect(res.statusCode, next).toBe(200);
    pages.push(res);
    ids.push(...res.json().data.map((r: { id: string }) => r.id));
    next = relsOf(res).next;
    if (pages.length > 200) throw new Error('walk does not end');
  }
  return { ids, pages };
}

const actor = { kind: 'user' as const, id: 'u_seed', role: 'owner' as const };

describe('lists: keyset cursors, Link, includeTotal', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  /** Live customers of `owner`, newest first, as the list must return them. */
  let customerOrder: string[];
  let jobOrder: string[];
  let foreignCustomerId: string;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    other = await newTenant(h, { name: 'Other' });
    // Timestamps that differ only in microseconds, and exact ties broken by id: a cursor
    // compared at millisecond precision (a JavaScript Date) would skip or repeat rows.
    await inTenant(h.database.db, owner.organizationId, actor, async (ctx: Ctx) => {
      await ctx.tx.execute(sql`
        INSERT INTO customers (id, organization_id, first_name, last_name, search_text, status, created_at)
        SELECT 'cus_l' || lpad(g::text, 3, '0'), ${owner.organizationId}, 'Walk' || g, 'Oak',
               'walk' || g || ' oak', CASE WHEN g % 3 = 0 THEN 'inactive' ELSE 'active' END,
               timestamptz '2026-01-01 10:00:00.000000' + (g / 3) * interval '1 microsecond'
        FROM generate_series(1, 23) AS g`);
      await ctx.tx.execute(sql`
        INSERT INTO customer_search (customer_id, organization_id, search_text, tags)
        SELECT id, organization_id, search_text, tags FROM customers WHERE organization_id = ${owner.organizationId}`);
    });
    const created = await owner.call('POST', '/api/customers', {
      firstName: 'Latest',
      lastName: 'Oak',
      email: 'latest@example.com',
    });
    expect(created.statusCode).toBe(201);
    customerId = created.json().data.id;
    const foreign = await other.call('POST', '/api/customers', { firstName: 'Foreign' });
    foreignCustomerId = foreign.json().data.id;

    const seeded = Array.from({ length: 23 }, (_, i) => ({ id: `cus_l${String(i + 1).padStart(3, '0')}`, i: i + 1 }));
    seeded.sort((a, b) => Math.floor(b.i / 3) - Math.floor(a.i / 3) || (a.id < b.id ? 1 : -1));
    customerOrder = [customerId, ...seeded.map((s) => s.id)];

    // Jobs: three dates with several jobs each (ties on scheduledDate), created out of date order.
    const dates = ['2026-06-03', '2026-06-01', '2026-06-02', '2026-06-01', '2026-06-03', '2026-06-01', '2026-06-02'];
    const jobs: Array<{ id: string; date: string; n: number }> = [];
    for (const [n, scheduledDate] of [...dates, ...dates].entries()) {
      const res = await owner.call('POST', '/api/jobs', { customerId, scheduledDate });
      expect(res.statusCode).toBe(201);
      jobs.push({ id: res.json().data.id, date: scheduledDate, n });
    }
    jobOrder = jobs.sort((a, b) => a.date.localeCompare(b.date) || a.n - b.n).map((j) => j.id);
  });
  afterAll(async () => h?.close());

  it('walks customers newest first by cursor: every row exactly once, in order', async () => {
    const { ids, pages } = await walk(owner, `/api/customers?limit=5&startingAfter=${customerOrder[0]}`);
    expect(ids).toEqual(customerOrder.slice(1));
    expect(pages.length).toBe(5);
    // Cursor style stays cursor style, with no prev; the last page has no next.
    for (const p of pages.slice(0, -1)) {
      expect(relsOf(p).next).toMatch(/startingAfter=cus_/);
      expect(relsOf(p).prev).toBeUndefined();
    }
    expect(relsOf(pages.at(-1) as LightMyRequestResponse).next).toBeUndefined();
  });

  it('walks customers from the first page: page style and cursor style give the same order', async () => {
    const byPage = await walk(owner, '/api/customers?limit=5');
    expect(byPage.ids).toEqual(customerOrder);
    expect(byPage.pages.length).toBe(5);
    expect(relsOf(byPage.pages[1] as LightMyRequestResponse).prev).toBe('/api/customers?page=1&limit=5');
    expect(relsOf(byPage.pages[0] as LightMyRequestResponse).next).toBe('/api/customers?page=2&limit=5');
    // A cursor walk started from the first page's last id reaches the same rows.
    const first = byPage.pages[0] as LightMyRequestResponse;
    const last = first.json().data.at(-1).id;
    const byCursor = await walk(owner, `/api/customers?limit=5&startingAfter=${last}`);
    expect([...first.json().data.map((c: { id: string }) => c.id), ...byCursor.ids]).toEqual(customerOrder);
  });

  it('walks jobs by scheduledDate, ties by creation, in both styles', async () => {
    expect((await walk(owner, '/api/jobs?limit=4')).ids).toEqual(jobOrder);
    const fromCursor = await walk(owner, `/api/jobs?limit=3&startingAfter=${jobOrder[0]}`);
    expect(fromCursor.ids).toEqual(jobOrder.slice(1));
    // A cursor in the middle of a tie continues inside the tie.
    expect((await walk(owner, `/api/jobs?limit=2&startingAfter=${jobOrder[2]}`)).ids).toEqual(jobOrder.slice(3));
  });

  it('keeps the filters in the links and walks only matching rows', async () => {
    const inactive = customerOrder.filter((id) => id !== customerId && Number(id.slice(5)) % 3 === 0);
    const { ids, pages } = await walk(owner, '/api/customers?status=inactive&limit=3&includeTotal=true');
    expect(ids).toEqual(inactive);
    for (const p of pages) {
      expect(p.headers['x-total-count']).toBe(String(inactive.length));
      for (const url of Object.values(relsOf(p))) {
        expect(url).toContain('status=inactive');
        expect(url).toContain('includeTotal=true');
      }
    }
    const cursorWalk = await walk(owner, `/api/customers?status=inactive&limit=2&startingAfter=${inactive[0]}`);
    expect(cursorWalk.ids).toEqual(inactive.slice(1));
    expect(cursorWalk.pages[0]?.headers['x-total-count']).toBeUndefined();
    const dated = await walk(owner, '/api/jobs?limit=2&startDate=2026-06-02&endDate=2026-06-02');
    expect(dated.ids.length).toBe(4);
    expect(relsOf(dated.pages[0] as LightMyRequestResponse).next).toContain('startDate=2026-06-02');
    const searched = await walk(owner, '/api/customers?search=walk1&limit=4');
    expect(searched.ids.sort()).toEqual(customerOrder.filter((id) => /^cus_l0(01|1\d)$/.test(id)).sort());
    expect(relsOf(searched.pages[0] as LightMyRequestResponse).next).toContain('search=walk1');
  });

  it('sends X-Total-Count only with includeTotal=true, the count of all matching rows on any page', async () => {
    const plain = await owner.call('GET', '/api/customers?limit=5');
    expect(plain.headers['x-total-count']).toBeUndefined();
    expect(relsOf(plain).last).toBeUndefined();
    const no = await owner.call('GET', '/api/customers?limit=5&includeTotal=false');
    expect(no.headers['x-total-count']).toBeUndefined();
    for (const url of [
      '/api/customers?limit=5&includeTotal=true',
      '/api/customers?limit=5&page=4&includeTotal=true',
      '/api/customers?limit=5&page=40&includeTotal=true',
      `/api/customers?limit=5&includeTotal=true&startingAfter=${customerOrder[20]}`,
    ]) {
      const res = await owner.call('GET', url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['x-total-count'], url).toBe(String(customerOrder.length));
    }
    const counted = await owner.call('GET', '/api/customers?limit=5&includeTotal=true');
    expect(relsOf(counted).last).toBe('/api/customers?includeTotal=true&page=5&limit=5');
    const jobsCounted = await owner.call('GET', '/api/jobs?limit=2&includeTotal=true&status=scheduled');
    expect(jobsCounted.headers['x-total-count']).toBe(String(jobOrder.length));
  });

  it('has no rel="next" on the last page, also when it is exactly full', async () => {
    const full = await owner.call('GET', `/api/customers?limit=4&startingAfter=${customerOrder[19]}`);
    expect(full.json().data.length).toBe(4);
    expect(relsOf(full).next).toBeUndefined();
    const pageFull = await owner.call('GET', '/api/customers?limit=4&page=6');
    expect(pageFull.json().data.length).toBe(4);
    expect(relsOf(pageFull).next).toBeUndefined();
    expect(relsOf(pageFull).prev).toBe('/api/customers?page=5&limit=4');
    // A real cursor at the very end is an empty last page, not an error.
    const end = await owner.call('GET', `/api/customers?startingAfter=${customerOrder.at(-1)}`);
    expect(end.statusCode).toBe(200);
    expect(end.json().data).toEqual([]);
    expect(relsOf(end).next).toBeUndefined();
  });

  it('still accepts a soft-deleted customer as a cursor, so a walk survives a delete', async () => {
    const first = await owner.call('GET', '/api/customers?limit=5');
    const lastId = first.json().data.at(-1).id;
    expect((await owner.call('DELETE', `/api/customers/${lastId}`)).statusCode).toBe(204);
    const rest = await walk(owner, `/api/customers?limit=5&startingAfter=${lastId}`);
    expect(rest.ids).toEqual(customerOrder.slice(5));
    const counted = await owner.call('GET', '/api/customers?includeTotal=true&limit=1');
    expect(counted.headers['x-total-count']).toBe(String(customerOrder.length - 1));
  });

  it('refuses bad list input with 400 VALIDATION_FAILED naming the field, never 500', async () => {
    const [jobId] = jobOrder;
    const cases: Array<[string, string]> = [
      [`/api/customers?startingAfter=${foreignCustomerId}`, 'startingAfter'],
      [`/api/customers?startingAfter=${jobId}`, 'startingAfter'],
      [`/api/jobs?startingAfter=${customerId}`, 'startingAfter'],
      ['/api/customers?startingAfter=cus_doesnotexist', 'startingAfter'],
      ['/api/customers?startingAfter=%27%20OR%201%3D1--', 'startingAfter'],
      ['/api/customers?startingAfter=', 'startingAfter'],
      [`/api/customers?startingAfter=${customerId}&page=2`, 'startingAfter'],
      [`/api/customers?startingAfter=${customerId}&page=1`, 'startingAfter'],
      ['/api/customers?limit=0', 'limit'],
      ['/api/customers?limit=101', 'limit'],
      ['/api/customers?includeTotal=maybe', 'includeTotal'],
      ['/api/jobs?includeTotal=1', 'includeTotal'],
      [`/api/invoices?startingAfter=${customerId}`, 'startingAfter'],
      [`/api/members?startingAfter=${customerId}`, 'startingAfter'],
      [`/api/invitations?startingAfter=${customerId}`, 'startingAfter'],
      [`/api/webhooks?startingAfter=${customerId}`, 'startingAfter'],
      [`/api/api-keys?startingAfter=${customerId}`, 'startingAfter'],
    ];
    for (const [url, field] of cases) {
      const res = await owner.call('GET', url);
      expect(res.statusCode, url).toBe(400);
      const { error } = res.json();
      expect(error.code, url).toBe('VALIDATION_FAILED');
      expect(
        error.details.map((d: { field: string }) => d.field),
        url,
      ).toContain(field);
    }
    // The other organization cannot use our cursor either.
    const cross = await other.call('GET', `/api/customers?startingAfter=${customerId}`);
    expect(cross.statusCode).toBe(400);
  });

  it('pages members, invitations and api keys with the same contract', async () => {
    for (const n of [1, 2, 3]) {
      expect(
        (await owner.call('POST', '/api/invitations', { email: `p${n}@example.com`, role: 'member' })).statusCode,
      ).toBe(201);
      expect((await owner.call('POST', '/api/api-keys', { name: `k${n}` })).statusCode).toBe(201);
    }
    for (const base of ['/api/invitations', '/api/api-keys']) {
      const all = (await owner.call('GET', base)).json().data.map((r: { id: string }) => r.id);
      expect(all.length, base).toBe(3);
      const walked = await walk(owner, `${base}?limit=2`);
      expect(walked.ids, base).toEqual(all);
      expect(relsOf(walked.pages[0] as LightMyRequestResponse).next, base).toBe(`${base}?page=2&limit=2`);
      const cursor = await walk(owner, `${base}?limit=1&startingAfter=${all[0]}`);
      expect(cursor.ids, base).toEqual(all.slice(1));
      const counted = await owner.call('GET', `${base}?includeTotal=true&limit=1`);
      expect(counted.headers['x-total-count'], base).toBe('3');
    }
    const members = await owner.call('GET', '/api/members?includeTotal=true');
    expect(members.headers['x-total-count']).toBe('1');
    expect(relsOf(members).next).toBeUndefined();
    const afterOwner = await owner.call('GET', `/api/members?startingAfter=${members.json().data[0].id}`);
    expect(afterOwner.json().data).toEqual([]);
  });

  it('pages a contract activity log oldest first', async () => {
    const tpl = await owner.call('POST', '/api/contract-templates', { name: 'T', body: 'Hello {{customer.name}}' });
    expect(tpl.statusCode).toBe(201);
    const contract = await owner.call('POST', '/api/contracts', {
      customerId,
      templateId: tpl.json().data.id,
      title: 'Season',
      startDate: '2026-04-01',
      endDate: '2026-10-31',
    });
    expect(contract.statusCode, contract.body).toBe(201);
    const id = contract.json().data.id;
    const sent = await owner.call('POST', `/api/contracts/${id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    const all = (await owner.call('GET', `/api/contract-activity/${id}`)).json().data.map((a: { id: string }) => a.id);
    expect(all.length).toBeGreaterThanOrEqual(2);
    const walked = await walk(owner, `/api/contract-activity/${id}?limit=1`);
    expect(walked.ids).toEqual(all);
    const cursor = await walk(owner, `/api/contract-activity/${id}?limit=1&startingAfter=${all[0]}`);
    expect(cursor.ids).toEqual(all.slice(1));
  });
});
