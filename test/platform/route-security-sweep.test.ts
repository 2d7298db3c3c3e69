import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiPathNeedsCredentials } from '../../src/platform/access.js';
import { createHarness, type Harness } from '../harness.js';

/*
 * The route-security sweep takes its routes from the app itself: every registered
 * /api route answers 401 without credentials (except the public prefixes), and every
 * one must be declared in some routeSecuritySuite (test/security.ts), which checks
 * 404 for a foreign id, 403 for a member on admin routes and 403 below plan. A new
 * route that no suite declares fails here by name.
 */

const TEST_ROOT = new URL('..', import.meta.url).pathname;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * `{ method: 'X', url: … }` entries of every file that calls routeSecuritySuite, ids as
 * placeholders. A url may be a literal, a template, or a `const` of the same file
 * (`const base = \`/api/equipment/${item.id}\``), used alone or inside a template.
 */
function declaredRoutes(): Array<{ method: string; url: string; file: string }> {
  const out: Array<{ method: string; url: string; file: string }> = [];
  const entry = /method:\s*'(GET|POST|PUT|PATCH|DELETE)',\s*url:\s*(`[^`]*`|'[^']*'|[A-Za-z_]\w*)/g;
  const constant = /const\s+([A-Za-z_]\w*)\s*=\s*(`[^`]*`|'[^']*')/g;
  for (const file of testFiles(TEST_ROOT)) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes('routeSecuritySuite(')) continue;
    const constants = new Map([...text.matchAll(constant)].map((m) => [m[1] as string, (m[2] as string).slice(1, -1)]));
    const resolve = (raw: string) => {
      let url = /^[`']/.test(raw) ? raw.slice(1, -1) : (constants.get(raw) ?? '');
      url = url.replace(/\$\{([A-Za-z_]\w*)\}/g, (whole, name: string) => constants.get(name) ?? whole);
      return url.replace(/\$\{[^}]*\}/g, 'X1').split('?')[0] as string;
    };
    for (const m of text.matchAll(entry)) {
      out.push({ method: m[1] as string, url: resolve(m[2] as string), file: relative(TEST_ROOT, file) });
    }
  }
  return out;
}

const patternOf = (url: string) => new RegExp(`^${url.replace(/:[A-Za-z_]+/g, '[^/]+')}$`);

/**
 * Routes that existed before this sweep without a suite declaring them. Shrink it;
 * never add to it: a new route is declared in its family's security test instead.
 */
const NOT_YET_DECLARED = new Set<string>([]);

describe('route-security sweep over every registered /api route', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.close());

  const apiRoutes = () =>
    h.app.registeredRoutes.filter(
      (r) => r.url.startsWith('/api/') && (METHODS as readonly string[]).includes(r.method.toUpperCase()),
    );

  it('answers 401 UNAUTHENTICATED without credentials on every route but the public prefixes', async () => {
    const routes = apiRoutes().filter((r) => apiPathNeedsCredentials(r.url) && r.access !== 'public');
    expect(routes.length).toBeGreaterThan(50);
    const wrong: string[] = [];
    for (const r of routes) {
      const url = r.url.replace(/:[A-Za-z_]+/g, 'x_sweep0000000000000000');
      const res = await h.app.inject({ method: r.method as 'GET', url });
      if (res.statusCode !== 401 || res.json().error?.code !== 'UNAUTHENTICATED') {
        wrong.push(`${r.method} ${r.url} → ${res.statusCode}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('finds every credentialed route declared in a routeSecuritySuite', () => {
    const declared = declaredRoutes();
    const missing = apiRoutes()
      .filter((r) => apiPathNeedsCredentials(r.url) && r.access !== 'public')
      .map((r) => `${r.method.toUpperCase()} ${r.url}`)
      .filter((key) => {
        const [method, url] = key.split(' ') as [string, string];
        const pattern = patternOf(url);
        return !declared.some((d) => d.method === method && pattern.test(d.url));
      });
    expect(missing.filter((k) => !NOT_YET_DECLARED.has(k))).toEqual([]);
    // A route that got its declaration leaves the list.
    expect([...NOT_YET_DECLARED].filter((k) => !missing.includes(k))).toEqual([]);
  });
});
