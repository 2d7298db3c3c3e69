import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createHarness, type Harness, newTenant, setPlan, type TestUser } from './harness.js';

/**
 * One route under the shared security suite. `url` may hold ids created by
 * `setup` in the first organization.
 */
export interface SecuredRoute {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  body?: unknown;
  /** The URL names a record of the first organization: another organization must get 404. */
  crossTenant?: boolean;
  /** Owner/admin only: a `member` must get 403 FORBIDDEN. */
  adminOnly?: boolean;
  /** Business plan only: a lower plan must get 403 PLAN_REQUIRED. */
  businessOnly?: boolean;
}

/**
 * The shared route-security suite (architecture.md "Tests"): every route plugs in.
 *  - no credentials → 401 UNAUTHENTICATED;
 *  - another organization's record → 404 NOT_FOUND, same as a missing one;
 *  - a `member` on an owner/admin route → 403 FORBIDDEN;
 *  - an organization below Business on a gated route → 403 PLAN_REQUIRED.
 */
export function routeSecuritySuite(
  title: string,
  setup: (h: Harness, owner: TestUser) => Promise<SecuredRoute[]>,
  env: Record<string, string> = {},
) {
  describe(`route security: ${title}`, () => {
    let h: Harness;
    let owner: TestUser;
    let other: TestUser;
    let member: TestUser;
    let routes: SecuredRoute[] = [];

    beforeAll(async () => {
      h = await createHarness(env);
      owner = await newTenant(h);
      other = await newTenant(h, { name: 'Other Org' });
      member = await addMember(h, owner, 'member');
      routes = await setup(h, owner);
    });
    afterAll(async () => h?.close());

    const label = (r: SecuredRoute) => `${r.method} ${r.url.replace(/[a-z]{3,4}_[0-9a-z]{20,}/g, ':id')}`;

    it('answers 401 to every route without credentials', async () => {
      expect(routes.length).toBeGreaterThan(0);
      for (const r of routes) {
        const res = await h.app.inject({
          method: r.method,
          url: r.url,
          ...(r.body ? { payload: r.body as object } : {}),
        });
        expect(res.statusCode, label(r)).toBe(401);
        expect(res.json().error.code, label(r)).toBe('UNAUTHENTICATED');
      }
    });

    it("answers 404 to another organization's ids, exactly like a missing record", async () => {
      for (const r of routes.filter((x) => x.crossTenant)) {
        const res = await other.call(r.method, r.url, r.body);
        expect(res.statusCode, label(r)).toBe(404);
        expect(res.json().error.code, label(r)).toBe('NOT_FOUND');
      }
    });

    it('answers 403 FORBIDDEN to a member on owner/admin routes', async () => {
      for (const r of routes.filter((x) => x.adminOnly)) {
        const res = await member.call(r.method, r.url, r.body);
        expect(res.statusCode, label(r)).toBe(403);
        expect(res.json().error.code, label(r)).toBe('FORBIDDEN');
      }
    });

    it('answers 403 PLAN_REQUIRED below the Business plan on gated routes', async () => {
      const gated = routes.filter((x) => x.businessOnly);
      if (gated.length === 0) return;
      await setPlan(h, owner.organizationId, 'pro');
      try {
        for (const r of gated) {
          const res = await owner.call(r.method, r.url, r.body);
          expect(res.statusCode, label(r)).toBe(403);
          expect(res.json().error.code, label(r)).toBe('PLAN_REQUIRED');
        }
      } finally {
        await setPlan(h, owner.organizationId, 'business');
      }
    });
  });
}
