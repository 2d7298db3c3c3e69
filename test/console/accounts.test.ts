import { and, eq } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailJobs } from '../../src/db/schema/index.js';
import type { TestUser } from '../harness.js';
import {
  type ConsoleServer,
  consoleWithOwner,
  expectAccessibleControls,
  newPage,
  PASSWORD,
  screenshot,
  signInInBrowser,
  uniqueEmail,
} from './browser.js';

/** The console's account pages (issue 48): a forgotten password, and accepting an invitation. */
describe('web console: password reset and invitations', () => {
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

  /** The link of the newest queued mail of `documentType` about `documentId` (its text part). */
  async function linkIn(documentType: string, documentId: string, path: string): Promise<string> {
    const rows = await server.h.admin.db
      .select()
      .from(mailJobs)
      .where(and(eq(mailJobs.documentType, documentType), eq(mailJobs.documentId, documentId)));
    const body = rows.sort((a, b) => +b.createdAt - +a.createdAt)[0]?.body ?? '';
    const link = new RegExp(`${server.base}(${path}\\S*)`).exec(body)?.[1];
    if (!link) throw new Error(`no ${path} link in ${body}`);
    return link;
  }

  it('resets a forgotten password from the sign-in page through the mailed link', async () => {
    const { context, page: anon } = await newPage(server);
    await anon.goto('/app/sign-in');
    await anon.getByRole('link', { name: 'Forgot your password?' }).click();
    await anon.getByLabel('Email').fill(email);
    await anon.getByRole('button', { name: 'Mail me a link' }).click();
    await anon.getByText(/a link to choose a new password is on its way/).waitFor();
    await expectAccessibleControls(anon);
    await screenshot(anon, 'forgot-password');

    await anon.goto(await linkIn('account', owner.userId, '/app/reset-password'));
    await anon.getByLabel(/New password/).fill('a fresh secret 42');
    await expectAccessibleControls(anon);
    await screenshot(anon, 'reset-password');
    await anon.getByRole('button', { name: 'Set the new password' }).click();
    await anon.getByText(/Your password is changed/).waitFor();

    // The owner's other session (the main page) ended; the new password works, the old does not.
    expect((await owner.call('GET', '/api/settings')).statusCode).toBe(401);
    await signInInBrowser(anon, email, PASSWORD);
    await anon.getByText('Wrong email or password.').waitFor();
    await signInInBrowser(anon, email, 'a fresh secret 42');
    await anon.getByRole('combobox', { name: 'Organization' }).waitFor();
    await context.close();

    // The same link again: refused, with a way to ask for a new one.
    const { context: again, page: late } = await newPage(server);
    await late.goto(await linkIn('account', owner.userId, '/app/reset-password'));
    await late.getByLabel(/New password/).fill('yet another one');
    await late.getByRole('button', { name: 'Set the new password' }).click();
    await late.getByText(/invalid, expired or already used/).waitFor();
    await late.getByRole('link', { name: 'Ask for a new link' }).waitFor();
    await again.close();
    await signInInBrowser(page, email, 'a fresh secret 42');
    await page.getByRole('combobox', { name: 'Organization' }).waitFor();
  });

  it('takes an invitee from the mailed link through sign-up to the team, with one button', async () => {
    const invitee = uniqueEmail('crew-lead');
    const inv = await (await signedInOwner()).call('POST', '/api/invitations', { email: invitee, role: 'member' });
    expect(inv.statusCode, inv.body).toBe(201);
    const [mail] = await server.h.admin.db.select().from(mailJobs).where(eq(mailJobs.documentId, inv.json().data.id));
    expect(mail?.html).toContain('Accept the invitation');

    const { context, page: guest } = await newPage(server);
    await guest.goto(await linkIn('invitation', inv.json().data.id, '/app/invitations/'));
    // Signed out: to sign-in, then to sign-up, and back to the invitation afterwards.
    await guest.getByRole('link', { name: 'Create an account' }).click();
    await guest.getByLabel('Your name').fill('Casey Crew');
    await guest.getByLabel('Email').fill(invitee);
    await guest.getByLabel('Password').fill(PASSWORD);
    await guest.getByRole('button', { name: 'Sign up' }).click();
    await guest.getByRole('button', { name: 'Accept the invitation' }).waitFor();
    await expectAccessibleControls(guest);
    await screenshot(guest, 'invitation');
    await guest.getByRole('button', { name: 'Accept the invitation' }).click();
    await guest.waitForFunction(
      (org) => (document.querySelector('.org-switch select') as HTMLSelectElement | null)?.value === org,
      owner.organizationId,
    );
    await guest.getByText('member, business plan').waitFor();
    await context.close();
  });

  /** The owner's API handle after the reset above (their old cookie was revoked). */
  async function signedInOwner(): Promise<TestUser> {
    const cookies = await page.context().cookies();
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const { caller } = await import('../harness.js');
    return { ...owner, cookie, call: caller(server.h.app, { cookie }) };
  }
});
