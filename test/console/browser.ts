import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { caller, createHarness, type Harness, type TestUser } from '../harness.js';

/** Debian's chromium (`.ci/run` installs it when missing); playwright-core never downloads a browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** `CONSOLE_SCREENSHOTS=1 npx vitest run test/console` refreshes docs/console/*.png and docs/portal/*.png (README). */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';

export interface ConsoleServer {
  h: Harness;
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/**
 * The real app listening on 127.0.0.1 (BASE_URL is that origin, so the browser's Origin
 * passes the sign-in origin check), and a headless chromium.
 */
export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleServer> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const h = await createHarness({ BASE_URL: base, PORT: String(port), ...env });
  await h.app.listen({ host: '127.0.0.1', port });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  return {
    h,
    base,
    browser,
    close: async () => {
      await browser.close();
      await h.close();
    },
  };
}

export async function newPage(server: ConsoleServer): Promise<{ context: BrowserContext; page: Page }> {
  const context = await server.browser.newContext({ baseURL: server.base, viewport: { width: 1200, height: 820 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  // confirm() dialogs (revoke, rotate): a user who clicked the button means it.
  page.on('dialog', (d) => void d.accept());
  return { context, page };
}

export const PASSWORD = 'correct horse battery';
let counter = 0;
export const uniqueEmail = (who: string) => `${who}-${process.pid}-${Date.now()}-${++counter}@example.com`;

/** Signs up through the pages and creates an organization; ends on the dashboard. */
export async function signUpInBrowser(page: Page, email: string, orgName = 'Acme Lawn'): Promise<void> {
  await page.goto('/app');
  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Your name').fill('Pat Owner');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByLabel('Organization name').fill(orgName);
  await page.getByRole('button', { name: 'Create organization' }).click();
  await page.getByRole('combobox', { name: 'Organization' }).waitFor();
  await page.waitForFunction(() =>
    (document.querySelector('.org-switch select') as HTMLSelectElement | null)?.value.startsWith('org_'),
  );
}

export async function signInInBrowser(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto('/app/sign-in');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const CONTROL_ROLES = [
  'button',
  'checkbox',
  'combobox',
  'link',
  'listbox',
  'progressbar',
  'radio',
  'searchbox',
  'slider',
  'spinbutton',
  'switch',
  'textbox',
];
const UNNAMED = new RegExp(`^\\s*- (${CONTROL_ROLES.join('|')})(?!\\s+")(\\s|:|$)`);

/**
 * Every control on the page has an accessible name: the aria snapshot (what assistive
 * technology sees) names each one, and there are as many named controls as the page has.
 */
export async function expectAccessibleControls(page: Page): Promise<void> {
  const snapshot = await page.locator('body').ariaSnapshot();
  const unnamed = snapshot.split('\n').filter((line) => UNNAMED.test(line));
  expect(unnamed, `controls without an accessible name:\n${snapshot}`).toEqual([]);
  const controls = await page
    .locator('input:not([type=hidden]), select, textarea, button, a[href], progress')
    .filter({ visible: true })
    .count();
  const named = snapshot.split('\n').filter((line) => new RegExp(`^\\s*- (${CONTROL_ROLES.join('|')}) "`).test(line));
  expect(named.length).toBeGreaterThanOrEqual(controls);
}

export async function screenshot(page: Page, name: string, dir = 'docs/console'): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: `${dir}/${name}.png`, fullPage: true });
}

/** The owner signed up in the browser, as a harness user (for seeding through the API). */
export async function ownerFromPage(server: ConsoleServer, page: Page, email: string): Promise<TestUser> {
  const cookies = await page.context().cookies();
  const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
  const orgs = (await caller(server.h.app, { cookie })('GET', '/api/organizations')).json().data as Array<{
    id: string;
    active: boolean;
  }>;
  const me = (await caller(server.h.app, { cookie })('GET', '/api/auth/get-session')).json().data;
  return {
    userId: me.user.id,
    email,
    cookie,
    organizationId: orgs.find((o) => o.active)?.id as string,
    call: caller(server.h.app, { cookie }),
  };
}

/** A console server with an owner signed up in the browser (a new organization), for the pages' tests. */
export async function consoleWithOwner(
  orgName: string,
): Promise<{ server: ConsoleServer; page: Page; owner: TestUser; email: string }> {
  const server = await startConsole();
  const { page } = await newPage(server);
  const email = uniqueEmail('owner');
  await signUpInBrowser(page, email, orgName);
  return { server, page, owner: await ownerFromPage(server, page, email), email };
}
