import { eq } from 'drizzle-orm';
import pino from 'pino';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorker, startTasks } from '../../src/background/runner.js';
import { sessions } from '../../src/db/schema/index.js';
import { workerTasks } from '../../src/modules/tasks.js';
import { addMember, caller, setPlan, type TestUser } from '../harness.js';
import {
  type ConsoleServer,
  consoleWithOwner,
  expectAccessibleControls,
  newPage,
  ownerFromPage,
  PASSWORD,
  screenshot,
  signInInBrowser,
} from './browser.js';

describe('web console: API keys, settings, export, dashboard and errors', () => {
  let server: ConsoleServer;
  let page: Page;
  let owner: TestUser;
  let email: string;

  beforeAll(async () => {
    ({ server, page, owner, email } = await consoleWithOwner('Greenway Landscaping'));
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates an API key (shown once), lists it and revokes it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('Accounting sync');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = page.getByRole('textbox', { name: 'API key "Accounting sync"' });
    await key.waitFor();
    const secret = await key.inputValue();
    expect(secret).toMatch(/^sk_/);
    const row = page.getByRole('row', { name: /Accounting sync/ });
    await row.waitFor();
    await expectAccessibleControls(page);
    await screenshot(page, 'api-keys');
    // The key works until it is revoked.
    expect((await caller(server.h.app, { authorization: `Bearer ${secret}` })('GET', '/api/settings')).statusCode).toBe(
      200,
    );

    await page.getByRole('button', { name: 'I have saved it' }).click();
    await row.getByRole('button', { name: 'Revoke Accounting sync' }).click();
    await page.getByText('The key "Accounting sync" is revoked.').waitFor();
    await page.getByRole('row', { name: /Accounting sync/ }).waitFor({ state: 'detached' });
    expect((await caller(server.h.app, { authorization: `Bearer ${secret}` })('GET', '/api/settings')).statusCode).toBe(
      401,
    );
  });

  it('edits the settings', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByLabel('Company name').fill('Greenway Landscaping LLC');
    await page.getByLabel('Timezone').fill('America/Chicago');
    await page.getByLabel('Tax rate (%)').fill('8.25');
    await page.getByLabel('Payment terms (days)').fill('15');
    await page.getByLabel(/Bill approval threshold/).fill('2500');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await expectAccessibleControls(page);
    await screenshot(page, 'settings');
    const saved = (await owner.call('GET', '/api/settings')).json().data;
    expect(saved).toMatchObject({
      companyName: 'Greenway Landscaping LLC',
      timezone: 'America/Chicago',
      taxRate: 8.25,
      paymentTermsDays: 15,
      billApprovalThreshold: 2500,
    });
  });

  it('starts an export and follows its progress bar to 100 %, then offers the download', async () => {
    const worker: RunningWorker = startTasks(workerTasks, {
      config: server.h.config,
      database: server.h.database,
      log: pino({ level: 'silent' }),
    });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await owner.call('POST', '/api/customers', { firstName: `Customer ${i}` })).statusCode).toBe(201);
      }
      await page.getByRole('link', { name: 'Export' }).click();
      await page.getByRole('radio', { name: /NDJSON/ }).check();
      await page.getByRole('button', { name: 'Start export' }).click();
      const bar = page.getByRole('progressbar', { name: 'Export progress' });
      await bar.waitFor();
      await page.locator('[data-export][data-status="completed"]').waitFor({ timeout: 60_000 });
      expect(await bar.getAttribute('value')).toBe('100');
      const link = page.getByRole('link', { name: 'Download the export (zip)' });
      const href = (await link.getAttribute('href')) as string;
      const download = await owner.call('GET', href);
      expect(download.statusCode).toBe(200);
      expect(download.rawPayload.subarray(0, 2).toString()).toBe('PK');
      await expectAccessibleControls(page);
      await screenshot(page, 'export');
    } finally {
      await worker.stop();
    }
  });

  it('shows the dashboard figures and the revenue chart', async () => {
    await page.getByRole('link', { name: 'Dashboard' }).click();
    await page.getByText('Outstanding receivables').waitFor();
    await page.getByRole('img', { name: 'Invoiced and collected revenue per period' }).waitFor();
    // Twelve months by default, each a pair of bars.
    expect(await page.locator('svg rect.bar-invoiced').count()).toBeGreaterThanOrEqual(12);
    await expectAccessibleControls(page);
    await screenshot(page, 'dashboard');
  });

  it('renders a busy dashboard and the export progress from responses shaped as operations.md §7', async () => {
    // Canned §7 answers: figures in every field and an export that takes several polls, which the
    // real routes above do not give in a small test organization.
    const months = Array.from({ length: 12 }, (_, i) => {
      const d = new Date(Date.UTC(2025, 11 + i, 1));
      return {
        period: d.toISOString().slice(0, 10),
        invoiced: 8000 + ((i * 1370) % 6000),
        collected: 6500 + ((i * 1110) % 5200),
      };
    });
    const figures = {
      revenue: { invoiced: 12840.5, collected: 9875 },
      receivables: {
        outstanding: 6420,
        overdueAmount: 1830,
        overdueCount: 3,
        aging: { current: 4590, days1to30: 1200, days31to60: 430, days61to90: 200, over90: 0 },
      },
      payables: { outstanding: 3100, dueNext7Days: 850 },
      jobs: {
        scheduledToday: 7,
        inProgress: 2,
        completed: 41,
        byStatus: { draft: 0, scheduled: 12, in_progress: 2, completed: 41, cancelled: 1 },
      },
      estimates: { sent: 12, approved: 8, conversionRate: 0.6667 },
      contracts: { active: 23, activeRevenue: 48200 },
      crew: { workHours: 312.5, driveHours: 41.25 },
      winter: { storms: 2, visitsServiced: 96 },
    };
    const json = (body: unknown, status = 200) => ({
      status,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    let polls = 0;
    const job = (percent: number) => ({
      id: 'exp_contract',
      status: percent >= 100 ? 'completed' : percent === 0 ? 'queued' : 'running',
      progress: { rows: Math.round((1200 * percent) / 100), totalRows: 1200, percent },
      sizeBytes: percent >= 100 ? 184_320 : null,
      expiresAt: percent >= 100 ? '2026-12-07T12:00:00.000Z' : null,
      createdAt: '2026-11-30T12:00:00.000Z',
    });
    await page.route(
      (url) => url.pathname === '/api/dashboard',
      (route) => route.fulfill(json({ data: figures })),
    );
    await page.route(
      (url) => url.pathname === '/api/dashboard/revenue',
      (route) => route.fulfill(json({ data: months })),
    );
    await page.route(
      (url) => url.pathname.startsWith('/api/exports'),
      (route) => {
        const path = new URL(route.request().url()).pathname;
        if (route.request().method() === 'POST') return route.fulfill(json({ data: job(0) }, 202));
        if (path === '/api/exports') return route.fulfill(json({ data: polls >= 3 ? [job(100)] : [] }));
        polls++;
        return route.fulfill(json({ data: job(Math.min(100, polls * 35)) }));
      },
    );
    try {
      // Leave the dashboard first (the real one may be open), so it loads again through the routes above.
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('heading', { name: 'Settings' }).waitFor();
      await page.getByRole('link', { name: 'Dashboard' }).click();
      await page.getByText('Outstanding receivables').waitFor();
      await page.getByRole('img', { name: 'Invoiced and collected revenue per period' }).waitFor();
      expect(await page.locator('svg rect.bar-invoiced').count()).toBe(12);
      expect(await page.locator('.figures').textContent()).toContain('$12,840.50');
      await expectAccessibleControls(page);
      await screenshot(page, 'dashboard');

      await page.getByRole('link', { name: 'Export' }).click();
      await page.getByRole('button', { name: 'Start export' }).click();
      const bar = page.getByRole('progressbar', { name: 'Export progress' });
      await bar.waitFor();
      await page.locator('[data-export][data-status="completed"]').waitFor();
      expect(await bar.getAttribute('value')).toBe('100');
      expect(await page.getByRole('link', { name: 'Download the export (zip)' }).getAttribute('href')).toBe(
        '/api/exports/exp_contract/download',
      );
      await expectAccessibleControls(page);
      await screenshot(page, 'export');
    } finally {
      await page.unrouteAll();
    }
  });

  it('says "wrong email or password" and keeps the user on the sign-in page', async () => {
    const { page: other, context } = await newPage(server);
    await signInInBrowser(other, email, 'not the password');
    await other.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
    expect(new URL(other.url()).pathname).toBe('/app/sign-in');
    await screenshot(other, 'sign-in-wrong-password');
    await context.close();
  });

  it('returns to sign-in with a message when the session has expired, and back to the page after', async () => {
    const { page: other, context } = await newPage(server);
    await signInInBrowser(other, email);
    await other.getByRole('button', { name: 'Sign out' }).waitFor();
    await other.getByRole('link', { name: 'Settings' }).click();
    await other.getByLabel('Company name').waitFor();
    // The session ends on the server (expiry, revocation): every session of this user, in fact.
    await server.h.admin.db.delete(sessions).where(eq(sessions.userId, owner.userId));
    server.h.app.deps.resolver.invalidate();
    await other.getByRole('link', { name: 'API keys' }).click();
    await other.getByText('Your session has expired. Sign in again to continue.').waitFor();
    // The sign-in page paints first; the address follows in an effect after that paint.
    await other.waitForURL(
      (url) => url.pathname === '/app/sign-in' && url.searchParams.get('next') === '/app/api-keys',
    );
    await other.getByLabel('Email').fill(email);
    await other.getByLabel('Password').fill(PASSWORD);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.getByRole('heading', { name: 'API keys' }).waitFor();
    await context.close();
    // The first page's session went too: sign it in again for the tests below.
    await signInInBrowser(page, email);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    owner = await ownerFromPage(server, page, email);
  });

  it('explains to a member that webhooks and API keys need an owner or admin, and shows settings read-only', async () => {
    const member = await addMember(server.h, owner, 'member');
    const { page: other, context } = await newPage(server);
    await signInInBrowser(other, member.email);
    // A member whose session has no active organization picks one.
    const pick = other.getByRole('button', { name: 'Greenway Landscaping' });
    await Promise.race([pick.waitFor(), other.getByRole('button', { name: 'Sign out' }).waitFor()]);
    if (await pick.isVisible()) await pick.click();
    await other.getByRole('link', { name: 'Webhooks' }).click();
    await other.getByRole('heading', { name: 'Only owners and admins can manage webhooks' }).waitFor();
    expect(await other.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
    await screenshot(other, 'member-forbidden');
    await other.getByRole('link', { name: 'API keys' }).click();
    await other.getByRole('heading', { name: 'Only owners and admins can manage api keys' }).waitFor();
    await other.getByRole('link', { name: 'Settings' }).click();
    await other.getByText('Only owners and admins can change settings').waitFor();
    expect(await other.getByLabel('Company name').isDisabled()).toBe(true);
    expect(await other.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    await context.close();
  });

  it('explains the Business plan on plan-gated pages instead of failing', async () => {
    await setPlan(server.h, owner.organizationId, 'pro');
    try {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks are part of the Business plan' }).waitFor();
      await screenshot(page, 'plan-required');
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('heading', { name: 'API keys are part of the Business plan' }).waitFor();
    } finally {
      await setPlan(server.h, owner.organizationId, 'business');
    }
  });

  it('shows a readable message for a 429 and for an unreachable API', async () => {
    await page.route('**/api/api-keys?*', (route) =>
      route.fulfill({
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': '30' },
        body: JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'Rate limit exceeded', requestId: 'req_x' } }),
      }),
    );
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('alert').filter({ hasText: 'Too many requests. Wait 30 seconds and try again.' }).waitFor();
    await page.unroute('**/api/api-keys?*');

    await page.route('**/api/settings', (route) => route.abort('connectionrefused'));
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('alert').filter({ hasText: "Can't reach the server" }).waitFor();
    await page.unroute('**/api/settings');
  });

  it('creates a second organization from the switcher and switches back', async () => {
    await page.getByRole('combobox', { name: 'Organization' }).selectOption({ label: '+ New organization…' });
    await page.getByLabel('Organization name').fill('Northside Snow');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page
      .getByRole('heading', { name: /^Northside Snow$|Create an organization/ })
      .first()
      .waitFor();
    await page.waitForFunction(
      () =>
        (document.querySelector('.org-switch select') as HTMLSelectElement | null)?.selectedOptions[0]?.text ===
        'Northside Snow',
    );
    // The select shows the choice at once; the server has switched only when /activate has answered.
    const activated = page.waitForResponse(
      (r) =>
        r.request().method() === 'POST' && /\/api\/organizations\/[^/]+\/activate$/.test(new URL(r.url()).pathname),
    );
    await page.getByRole('combobox', { name: 'Organization' }).selectOption({ label: 'Greenway Landscaping' });
    expect((await activated).status()).toBe(200);
    await page.waitForFunction(
      () =>
        (document.querySelector('.org-switch select') as HTMLSelectElement | null)?.selectedOptions[0]?.text ===
        'Greenway Landscaping',
    );
    const orgs = (await owner.call('GET', '/api/organizations')).json().data as Array<{
      name: string;
      active: boolean;
    }>;
    expect(orgs.find((o) => o.active)?.name).toBe('Greenway Landscaping');
    expect(orgs.map((o) => o.name).sort()).toEqual(['Greenway Landscaping', 'Northside Snow']);
  });
});
