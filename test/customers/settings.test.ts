import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getOrgSettings } from '../../src/modules/settings/settings.service.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

describe('settings', () => {
  let h: Harness;
  let owner: TestUser;
  let member: TestUser;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: 'America/Chicago' });
    member = await addMember(h, owner, 'member');
  });
  afterAll(async () => h?.close());

  const actor = { kind: 'user' as const, id: 'u', role: 'owner' as const };

  it('shows defaults and the plan to any member', async () => {
    const res = await member.call('GET', '/api/settings');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      timezone: 'America/Chicago',
      taxRate: 0,
      currency: 'USD',
      paymentTermsDays: 30,
      visitHorizonDays: 56,
      visitReminderHours: null,
      depot: null,
      billApprovalThreshold: null,
      notifyOwners: true,
      companyName: null,
      companyEmail: null,
      companyPhone: null,
      companyAddress: null,
      bookingSlug: null,
      stripePublishableKey: null,
      stripeWebhookConfigured: false,
      stripeSecretKeyConfigured: false,
      twilioAccountSid: null,
      twilioConfigured: false,
      smsFrom: null,
      smsEnabled: false,
      smsQuietHours: null,
      reminderChannels: ['email'],
      country: 'US',
      plan: 'business',
    });
  });

  it('keeps the Stripe publishable key readable (it is public) and refuses a secret key in its place', async () => {
    const set = await owner.call('PATCH', '/api/settings', { stripePublishableKey: 'pk_test_abcdefgh12345678' });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.stripePublishableKey).toBe('pk_test_abcdefgh12345678');
    const wrong = await owner.call('PATCH', '/api/settings', { stripePublishableKey: 'sk_test_abcdefgh12345678' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error.details[0].field).toBe('stripePublishableKey');
    const cleared = await owner.call('PATCH', '/api/settings', { stripePublishableKey: null });
    expect(cleared.json().data.stripePublishableKey).toBeNull();
  });

  it('lets owner/admin change settings, which getOrgSettings then returns', async () => {
    const admin = await addMember(h, owner, 'admin');
    const res = await admin.call('PATCH', '/api/settings', {
      timezone: 'Europe/Berlin',
      taxRate: 8.125,
      currency: 'EUR',
      paymentTermsDays: 14,
      billApprovalThreshold: 2500.5,
      companyName: 'Acme Lawn',
      companyEmail: 'office@acme.example',
      companyPhone: '555-0100',
      companyAddress: '1 Main St, Springfield',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ timezone: 'Europe/Berlin', taxRate: 8.125, billApprovalThreshold: 2500.5 });
    const partial = await owner.call('PATCH', '/api/settings', { companyPhone: null, paymentTermsDays: 0 });
    expect(partial.json().data).toMatchObject({ companyPhone: null, paymentTermsDays: 0, currency: 'EUR' });
    expect((await member.call('GET', '/api/settings')).json().data).toEqual(partial.json().data);

    const s = await inTenant(h.database.db, owner.organizationId, actor, getOrgSettings);
    expect(s).toMatchObject({
      timezone: 'Europe/Berlin',
      taxRate: 8.125,
      currency: 'EUR',
      paymentTermsDays: 0,
      billApprovalThresholdCents: 250050,
      companyName: 'Acme Lawn',
      companyPhone: null,
      plan: 'business',
      name: 'Acme Lawn',
    });
    const orgs = await owner.call('GET', '/api/organizations');
    expect(orgs.json().data[0].timezone).toBe('Europe/Berlin');
  });

  it('refuses bad values, the read-only plan and members, changing nothing', async () => {
    const before = (await owner.call('GET', '/api/settings')).json().data;
    const cases: Array<[unknown, string]> = [
      [{ timezone: 'Mars/Olympus' }, 'timezone'],
      [{ taxRate: 100.5 }, 'taxRate'],
      [{ taxRate: -1 }, 'taxRate'],
      [{ taxRate: 8.1255 }, 'taxRate'],
      [{ currency: 'usd' }, 'currency'],
      [{ currency: 'XYZ' }, 'currency'],
      [{ paymentTermsDays: 366 }, 'paymentTermsDays'],
      [{ paymentTermsDays: 1.5 }, 'paymentTermsDays'],
      [{ billApprovalThreshold: 10.001 }, 'billApprovalThreshold'],
      [{ companyEmail: 'nope' }, 'companyEmail'],
      [{ plan: 'starter' }, 'plan'],
      [{ taxRate: 5, plan: 'business' }, 'plan'],
    ];
    for (const [body, field] of cases) {
      const res = await owner.call('PATCH', '/api/settings', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(
        res.json().error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    const denied = await member.call('PATCH', '/api/settings', { taxRate: 1 });
    expect(denied.statusCode).toBe(403);
    expect(denied.json().error.code).toBe('FORBIDDEN');
    expect((await owner.call('GET', '/api/settings')).json().data).toEqual(before);
  });

  it('keeps organizations apart', async () => {
    const other = await newTenant(h, { name: 'Other' });
    await owner.call('PATCH', '/api/settings', { companyName: 'Only Mine' });
    expect((await other.call('GET', '/api/settings')).json().data.companyName).toBeNull();
  });
});
