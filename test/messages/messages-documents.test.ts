import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events, mailJobs, messages, portalTokens } from '../../src/db/schema/index.js';
import { sendDueTexts } from '../../src/modules/messages/messages.tasks.js';
import { twilioDeps } from '../../src/modules/messages/messages.twilio.js';
import { countRows } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { startTwilioStandIn, type TwilioStandIn } from './twilio-stand-in.js';

/*
 * operations.md §10: `POST /api/invoices/{id}/send` and estimates' `send` take
 * `channels: ["email", "sms"]` (default ["email"]) and text the portal link through the messages
 * outbox; a customer who cannot be texted is 409 naming what is missing, with nothing written.
 */

let h: Harness;
let stand: TwilioStandIn;
let accounts = 0;
let t = Date.now();
const tick = () => {
  t = Math.max(t, Date.now()) + 2_000;
  return new Date(t);
};

beforeAll(async () => {
  stand = await startTwilioStandIn();
  h = await createHarness({ ...stand.env, BASE_URL: 'https://crm.example.com' });
}, 180_000);
afterAll(async () => {
  await h?.close();
  await stand?.close();
});

const sidOf = new Map<string, string>();
/** Texts this organization handed to the stand-in. */
const handed = (owner: TestUser) =>
  stand.requests.filter((r) => r.accountSid === sidOf.get(owner.organizationId)).length;

async function smsTenant(): Promise<TestUser> {
  const owner = await newTenant(h, { name: 'Green Acres' });
  const sid = `AC${(++accounts).toString(16).padStart(32, 'd')}`;
  const token = `${accounts}`.padStart(32, 'e');
  stand.accounts.set(sid, token);
  sidOf.set(owner.organizationId, sid);
  const res = await owner.call('PATCH', '/api/settings', {
    twilioAccountSid: sid,
    twilioAuthToken: token,
    smsFrom: '+15005550006',
    smsEnabled: true,
    smsQuietHours: null,
  });
  expect(res.statusCode, res.body).toBe(200);
  return owner;
}

async function customer(owner: TestUser, { phone = '(415) 555-2671', optIn = true } = {}) {
  const res = await owner.call('POST', '/api/customers', {
    firstName: 'Dana',
    lastName: 'Lee',
    email: 'dana@example.com',
    phone,
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json().data.id as string;
  if (optIn) {
    const c = await owner.call('POST', `/api/customers/${id}/sms-consent`, { optedIn: true, evidence: 'asked' });
    expect(c.statusCode, c.body).toBe(200);
  }
  return id;
}

const lineItems = [{ description: 'Weekly mowing', quantity: 4, unitPrice: 45 }];

async function draft(owner: TestUser, kind: 'invoices' | 'estimates', customerId: string) {
  const res = await owner.call('POST', `/api/${kind}`, { customerId, lineItems });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string };
}

/** What a send may write: mail, texts, portal links, events. */
async function footprint(owner: TestUser) {
  const org = owner.organizationId;
  return {
    mail: await countRows(h, mailJobs, org),
    texts: await countRows(h, messages, org),
    links: await countRows(h, portalTokens, org),
    events: await countRows(h, events, org),
  };
}

const textsOf = (owner: TestUser) =>
  h.admin.db.select().from(messages).where(eq(messages.organizationId, owner.organizationId));

describe.each(['invoices', 'estimates'] as const)('POST /api/%s/{id}/send with channels', (kind) => {
  const textKind = kind === 'invoices' ? 'invoice_link' : 'estimate_link';

  it('["sms"] texts the portal link through the outbox, once, and mails nothing', async () => {
    const owner = await smsTenant();
    const cus = await customer(owner);
    const doc = await draft(owner, kind, cus);
    const res = await owner.call('POST', `/api/${kind}/${doc.id}/send`, { channels: ['sms'] });
    expect(res.statusCode, res.body).toBe(200);
    const sent = res.json().data;
    expect(sent).toMatchObject({ status: 'sent', emailedTo: [], textedTo: '+14155552671' });
    expect(sent.textMessageId).toMatch(/^msg_/);
    expect(await countRows(h, mailJobs, owner.organizationId)).toBe(0);

    const [text] = await textsOf(owner);
    expect(text).toMatchObject({
      id: sent.textMessageId,
      kind: textKind,
      status: 'queued',
      to: '+14155552671',
      customerId: cus,
      ...(kind === 'invoices' ? { invoiceId: doc.id } : { estimateId: doc.id }),
    });
    expect(text?.body).toContain(sent.portalUrl);
    expect(text?.body).toMatch(/^Green Acres: (invoice INV-|estimate EST-)/);

    // The worker hands it to Twilio once; a second run sends nothing more.
    await sendDueTexts(h.database, twilioDeps(h.config), tick());
    await sendDueTexts(h.database, twilioDeps(h.config), tick());
    const accepted = stand.accepted.filter((a) => a.body === text?.body);
    expect(accepted).toHaveLength(1);
    const got = await owner.call('GET', `/api/messages/${sent.textMessageId}`);
    expect(got.json().data).toMatchObject({ status: 'sent', providerId: accepted[0]?.sid });
  });

  it('["email","sms"] mails and texts; no body or no channels is email only', async () => {
    const owner = await smsTenant();
    const cus = await customer(owner);
    const both = await draft(owner, kind, cus);
    const res = await owner.call('POST', `/api/${kind}/${both.id}/send`, { channels: ['email', 'sms'] });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ emailedTo: ['dana@example.com'], textedTo: '+14155552671' });
    expect(await countRows(h, mailJobs, owner.organizationId)).toBe(1);
    expect(await textsOf(owner)).toHaveLength(1);

    for (const body of [undefined, {}, { channels: ['email'] }]) {
      const doc = await draft(owner, kind, cus);
      const plain = await owner.call('POST', `/api/${kind}/${doc.id}/send`, body);
      expect(plain.statusCode, plain.body).toBe(200);
      expect(plain.json().data).toMatchObject({
        emailedTo: ['dana@example.com'],
        textedTo: null,
        textMessageId: null,
      });
    }
    expect(await textsOf(owner)).toHaveLength(1);
  });

  it('a customer without consent or without a valid mobile: 409 naming it, and nothing written or sent', async () => {
    const owner = await smsTenant();
    const cases = [
      {
        customerId: await customer(owner, { optIn: false }),
        missing: 'has not opted in to texts (smsConsent opted_in)',
      },
      { customerId: await customer(owner, { phone: '555-01' }), missing: 'no valid mobile number (phoneE164)' },
    ];
    for (const { customerId, missing } of cases) {
      const doc = await draft(owner, kind, customerId);
      const before = await footprint(owner);
      for (const channels of [['sms'], ['email', 'sms']]) {
        const res = await owner.call('POST', `/api/${kind}/${doc.id}/send`, { channels });
        expect(res.statusCode, res.body).toBe(409);
        expect(res.json().error.code).toBe('INVALID_STATE');
        expect(res.json().error.message).toContain(missing);
      }
      expect(await footprint(owner)).toEqual(before);
      const still = await owner.call('GET', `/api/${kind}/${doc.id}`);
      expect(still.json().data.status).toBe('draft');
      await sendDueTexts(h.database, twilioDeps(h.config), tick());
      expect(handed(owner)).toBe(0);
    }
  });

  it('refuses channels that are not email or sms, empty or repeated (400)', async () => {
    const owner = await smsTenant();
    const doc = await draft(owner, kind, await customer(owner));
    for (const channels of [[], ['fax'], ['sms', 'sms'], 'sms']) {
      const res = await owner.call('POST', `/api/${kind}/${doc.id}/send`, { channels });
      expect(res.statusCode, res.body).toBe(400);
    }
    const [row] = await h.admin.db
      .select()
      .from(messages)
      .where(and(eq(messages.organizationId, owner.organizationId)));
    expect(row).toBeUndefined();
  });
});
