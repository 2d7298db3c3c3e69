import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractActivity, contracts } from '../../src/db/schema/index.js';
import { activateDueContracts, expireEndedContracts } from '../../src/modules/contracts/contracts.lifecycle.js';
import { createCustomer, createProperty, deliverMail, eventsOf } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

const TEMPLATE =
  'Service agreement "{{title}}" between {{company.name}} and {{customer.name}} <{{customer.email}}>, ' +
  'at {{property.address}}, from {{startDate}} to {{endDate}}. Total: USD {{totalValue}}.';

describe('contracts', () => {
  let h: Harness;
  let owner: TestUser;
  let customer: Awaited<ReturnType<typeof createCustomer>>;
  let propertyId: string;
  let templateId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { name: 'Green Acres LLC', timezone: 'America/Chicago' });
    customer = await createCustomer(h, owner, {
      firstName: 'Dana',
      lastName: 'Reyes',
      email: 'dana@example.com',
      additionalEmails: ['office@example.com'],
    });
    propertyId = (await createProperty(h, owner, customer.id)).id;
    const t = await owner.call('POST', '/api/contract-templates', { name: 'Seasonal', body: TEMPLATE });
    expect(t.statusCode).toBe(201);
    templateId = t.json().data.id;
  });
  afterAll(async () => h?.close());

  const contractCount = async () =>
    Number(
      (
        await h.admin.db
          .select({ n: count() })
          .from(contracts)
          .where(eq(contracts.organizationId, owner.organizationId))
      )[0]?.n,
    );
  const newContract = async (extra: Record<string, unknown> = {}) => {
    const res = await owner.call('POST', '/api/contracts', {
      title: 'Lawn care 2026',
      customerId: customer.id,
      propertyId,
      templateId,
      startDate: '2026-04-01',
      endDate: '2026-10-31',
      services: [
        { description: 'Weekly mowing', unitPrice: 19.99, quantity: 3 },
        { description: 'Aeration', unitPrice: 33.33, quantity: 1.5 },
        { description: 'Spring cleanup', unitPrice: 120 },
      ],
      terms: 'Payment due monthly.',
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const portalPath = (url: string) => new URL(url).pathname;

  it('manages templates and refuses unknown placeholders', async () => {
    const bad = await owner.call('POST', '/api/contract-templates', { name: 'X', body: 'Hi {{customer.nickname}}' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].field).toBe('body');
    const t = await owner.call('POST', '/api/contract-templates', { name: 'Temp', body: 'Dear {{customer.name}}' });
    const id = t.json().data.id;
    expect(t.json().data.placeholders).toEqual(['customer.name']);
    expect((await owner.call('PUT', `/api/contract-templates/${id}`, { name: 'Renamed' })).json().data.name).toBe(
      'Renamed',
    );
    expect((await owner.call('GET', `/api/contract-templates/${id}`)).statusCode).toBe(200);
    const list = await owner.call('GET', '/api/contract-templates?includeTotal=true');
    expect(list.json().data.map((x: { id: string }) => x.id)).toContain(id);
    expect(list.headers['x-total-count']).toBe('2');
    expect((await owner.call('DELETE', `/api/contract-templates/${id}`)).statusCode).toBe(204);
    expect((await owner.call('GET', `/api/contract-templates/${id}`)).statusCode).toBe(404);
  });

  it('fills the template and totals the services to the cent', async () => {
    const c = await newContract();
    // 3 × 19.99 = 59.97; 1.5 × 33.33 = 49.995 → 50.00 (half away from zero); 120.00.
    expect(c.services.map((l: { amount: number }) => l.amount)).toEqual([59.97, 50, 120]);
    expect(c.services[2].quantity).toBe(1);
    expect(c.totalValue).toBe(229.97);
    expect(c.status).toBe('draft');
    expect(c.content).toBe(
      'Service agreement "Lawn care 2026" between Green Acres LLC and Dana Reyes <dana@example.com>, ' +
        'at 400 Oak Ave, Springfield, IL 62704, from 2026-04-01 to 2026-10-31. Total: USD 229.97.\n\nPayment due monthly.',
    );
    expect(c.activity.map((a: { type: string }) => a.type)).toEqual(['created']);
    expect(c.signature).toBeNull();
  });

  it('refuses bad input with 400, writing nothing and emitting nothing', async () => {
    const other = await newTenant(h, { name: 'Other' });
    const foreign = await createCustomer(h, other);
    const foreignTemplate = (await other.call('POST', '/api/contract-templates', { name: 'F', body: 'x' })).json().data
      .id;
    const base = { title: 'T', customerId: customer.id };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ customerId: customer.id }, 'title'],
      [{ title: 'T' }, 'customerId'],
      [{ ...base, customerId: foreign.id }, 'customerId'],
      [{ ...base, propertyId: (await createProperty(h, other, foreign.id)).id }, 'propertyId'],
      [{ ...base, templateId: foreignTemplate }, 'templateId'],
      [{ ...base, startDate: '2026-05-01', endDate: '2026-04-30' }, 'endDate'],
      [{ ...base, startDate: '2026-02-30' }, 'startDate'],
      [{ ...base, services: [{ description: 'x', unitPrice: 1.005 }] }, 'services.0.unitPrice'],
      [{ ...base, services: [{ description: 'x', unitPrice: 1, quantity: 0 }] }, 'services.0.quantity'],
      [{ ...base, services: [{ description: 'x', unitPrice: 1, quantity: 1.0001 }] }, 'services.0.quantity'],
      [{ ...base, status: 'active' }, 'status'],
      [{ ...base, totalValue: 5 }, 'totalValue'],
      [{ ...base, title: '   ' }, 'title'],
    ];
    const before = await contractCount();
    const eventsBefore = (await eventsOf(h, owner.organizationId)).length;
    for (const [body, field] of cases) {
      const res = await owner.call('POST', '/api/contracts', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(
        res.json().error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    expect(await contractCount()).toBe(before);
    expect((await eventsOf(h, owner.organizationId)).length).toBe(eventsBefore);
  });

  it('edits drafts only, refilling the content', async () => {
    const c = await newContract();
    const upd = await owner.call('PUT', `/api/contracts/${c.id}`, {
      endDate: '2026-11-30',
      services: [{ description: 'Mowing', unitPrice: 25, quantity: 4 }],
      terms: null,
    });
    expect(upd.statusCode).toBe(200);
    expect(upd.json().data).toMatchObject({ endDate: '2026-11-30', totalValue: 100, terms: null });
    expect(upd.json().data.content).toContain('to 2026-11-30. Total: USD 100.00.');
    expect(upd.json().data.content).not.toContain('Payment due');
    expect(upd.json().data.activity.map((a: { type: string }) => a.type)).toEqual(['created', 'updated']);
    const noop = await owner.call('PUT', `/api/contracts/${c.id}`, {});
    expect(noop.json().data.activity).toHaveLength(2);
    expect((await owner.call('PUT', `/api/contracts/${c.id}`, { startDate: '2026-12-01' })).statusCode).toBe(400);
    await owner.call('POST', `/api/contracts/${c.id}/send`);
    const eventsBefore = (await eventsOf(h, owner.organizationId)).length;
    const locked = await owner.call('PUT', `/api/contracts/${c.id}`, { terms: 'Changed' });
    expect(locked.statusCode).toBe(409);
    expect(locked.json().error.code).toBe('INVALID_STATE');
    expect((await owner.call('GET', `/api/contracts/${c.id}`)).json().data.terms).toBeNull();
    expect((await eventsOf(h, owner.organizationId)).length).toBe(eventsBefore);
    // A re-send issues a fresh link and emits contract.sent again, with no status change in it.
    const resend = await owner.call('POST', `/api/contracts/${c.id}/send`, {});
    expect(resend.statusCode).toBe(200);
    expect(resend.json().data.status).toBe('sent');
    const [evt] = (await eventsOf(h, owner.organizationId)).slice(eventsBefore);
    expect(evt?.type).toBe('contract.sent');
    expect(evt?.data).not.toHaveProperty('oldStatus');
  });

  it('sends with a portal link by mail, and the customer views and signs with evidence', async () => {
    const c = await newContract();
    const before = (await eventsOf(h, owner.organizationId)).length;
    const sent = await owner.call('POST', `/api/contracts/${c.id}/send`);
    expect(sent.statusCode).toBe(200);
    const body = sent.json().data;
    expect(body.status).toBe('sent');
    expect(body.sentAt).toBeTruthy();
    expect(body.portalUrl).toMatch(/\/api\/portal\/pt_/);
    const sentEvents = (await eventsOf(h, owner.organizationId)).slice(before);
    expect(sentEvents.map((e) => e.type)).toEqual(['contract.sent']);
    expect(sentEvents[0]?.data).toMatchObject({
      contractId: c.id,
      contract: { id: c.id, status: 'sent' },
      oldStatus: 'DRAFT',
      newStatus: 'SENT',
    });

    expect(body.lastEmail).toMatchObject({ status: 'pending', to: ['dana@example.com', 'office@example.com'] });
    await deliverMail(h);
    const file = h.config.mailOutboxFile;
    expect(existsSync(file)).toBe(true);
    const mails = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const mail = mails.find((m) => m.text.includes(body.portalUrl));
    expect(mail.to).toEqual(['dana@example.com', 'office@example.com']);

    const path = portalPath(body.portalUrl);
    const view = await h.app.inject({ method: 'GET', url: path });
    expect(view.statusCode).toBe(200);
    expect(view.json().data).toMatchObject({ type: 'contract', document: { id: c.id, content: c.content } });
    expect(view.json().data.document.activity).toBeUndefined();

    const noName = await h.app.inject({ method: 'POST', url: `${path}/sign`, payload: {} });
    expect(noName.statusCode).toBe(400);
    const signed = await h.app.inject({
      method: 'POST',
      url: `${path}/sign`,
      payload: { signerName: 'Dana Reyes' },
      headers: { 'user-agent': 'TestBrowser/1.0' },
      remoteAddress: '203.0.113.7',
    });
    expect(signed.statusCode).toBe(200);
    expect(signed.json().data.document.status).toBe('signed');

    const detail = (await owner.call('GET', `/api/contracts/${c.id}`)).json().data;
    expect(detail.status).toBe('signed');
    expect(detail.signature).toMatchObject({
      signerName: 'Dana Reyes',
      ipAddress: '203.0.113.7',
      userAgent: 'TestBrowser/1.0',
      contentSha256: createHash('sha256').update(c.content, 'utf8').digest('hex'),
    });
    expect(detail.signedAt).toBe(detail.signature.signedAt);
    expect(detail.activity.map((a: { type: string }) => a.type)).toEqual(['created', 'sent', 'viewed', 'signed']);
    const signedEvents = (await eventsOf(h, owner.organizationId)).filter((e) => e.type === 'contract.signed');
    expect(signedEvents).toHaveLength(1);
    expect(signedEvents[0]?.data).toMatchObject({ contractId: c.id, oldStatus: 'SENT', newStatus: 'SIGNED' });

    const afterSign = (await eventsOf(h, owner.organizationId)).length;
    const again = await h.app.inject({ method: 'POST', url: `${path}/sign`, payload: { signerName: 'Someone Else' } });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('INVALID_STATE');
    expect((await eventsOf(h, owner.organizationId)).length).toBe(afterSign);
    expect((await owner.call('GET', `/api/contracts/${c.id}`)).json().data.signature.signerName).toBe('Dana Reyes');
    expect((await owner.call('PUT', `/api/contracts/${c.id}`, { title: 'New' })).statusCode).toBe(409);
    const resend = await owner.call('POST', `/api/contracts/${c.id}/send`);
    expect(resend.statusCode).toBe(409);
    expect(resend.json().error.message).toBe('A signed contract cannot be sent');

    const log = await owner.call('GET', `/api/contract-activity/${c.id}`);
    expect(log.statusCode).toBe(200);
    const entries = log.json().data as Array<{ type: string; actorId: string | null; createdAt: string }>;
    expect(entries.map((e) => e.type)).toEqual(['created', 'sent', 'viewed', 'signed']);
    expect(entries.map((e) => e.actorId)).toEqual([owner.userId, owner.userId, null, null]);
    const times = entries.map((e) => Date.parse(e.createdAt));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect((await owner.call('GET', '/api/contract-activity/con_missing')).statusCode).toBe(404);
  });

  it('lets exactly one of two simultaneous signatures through', async () => {
    const c = await newContract();
    const url = (await owner.call('POST', `/api/contracts/${c.id}/send`)).json().data.portalUrl;
    const before = (await eventsOf(h, owner.organizationId)).filter((e) => e.type === 'contract.signed').length;
    const results = await Promise.all(
      ['Dana Reyes', 'Someone Else'].map((signerName) =>
        h.app.inject({ method: 'POST', url: `${portalPath(url)}/sign`, payload: { signerName } }),
      ),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const signed = (await eventsOf(h, owner.organizationId)).filter((e) => e.type === 'contract.signed');
    expect(signed.length - before).toBe(1);
    const winner = results.find((r) => r.statusCode === 200)?.json().data.document.signature.signerName;
    expect((await owner.call('GET', `/api/contracts/${c.id}`)).json().data.signature.signerName).toBe(winner);
  });

  it('cancels from any non-final state only', async () => {
    const draft = await newContract();
    const res = await owner.call('POST', `/api/contracts/${draft.id}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data.status).toBe('canceled');
    expect(res.json().data.activity.at(-1).type).toBe('canceled');
    expect((await owner.call('POST', `/api/contracts/${draft.id}/cancel`, {})).statusCode).toBe(409);
    expect((await owner.call('POST', `/api/contracts/${draft.id}/send`)).statusCode).toBe(409);
    for (const status of ['sent', 'signed', 'active', 'expired']) {
      const c = await newContract();
      await h.admin.db.update(contracts).set({ status }).where(eq(contracts.id, c.id));
      const r = await owner.call('POST', `/api/contracts/${c.id}/cancel`);
      expect(r.statusCode, status).toBe(status === 'expired' ? 409 : 200);
    }
    const filtered = await owner.call('GET', '/api/contracts?status=canceled&includeTotal=true');
    expect(filtered.json().data.every((x: { status: string }) => x.status === 'canceled')).toBe(true);
    expect(Number(filtered.headers['x-total-count'])).toBeGreaterThanOrEqual(4);
    expect((await owner.call('GET', `/api/contracts?customerId=${customer.id}&limit=1`)).json().data).toHaveLength(1);
    expect((await owner.call('GET', '/api/contracts?status=pending')).statusCode).toBe(400);
  });

  it('activates signed contracts on their start date and expires them after the end date, in the org timezone, once', async () => {
    const c = await newContract({ startDate: '2026-05-10', endDate: '2026-06-30' });
    const sent = (await owner.call('POST', `/api/contracts/${c.id}/send`)).json().data;
    await h.app.inject({ method: 'POST', url: `${portalPath(sent.portalUrl)}/sign`, payload: { signerName: 'Dana' } });
    const status = async () => (await owner.call('GET', `/api/contracts/${c.id}`)).json().data.status;

    // 04:00Z on the 10th is still the 9th in Chicago.
    await activateDueContracts(h.database.db, new Date('2026-05-10T04:00:00Z'));
    expect(await status()).toBe('signed');
    // Two workers at once: exactly one activation.
    const now = new Date('2026-05-10T06:00:00Z');
    await Promise.all([activateDueContracts(h.database.db, now), activateDueContracts(h.database.db, now)]);
    expect(await status()).toBe('active');
    const activated = await h.admin.db
      .select()
      .from(contractActivity)
      .where(sql`${contractActivity.contractId} = ${c.id} AND ${contractActivity.type} = 'activated'`);
    expect(activated).toHaveLength(1);
    // The article agrees with the state: "An active contract", never "A active contract".
    const sendActive = await owner.call('POST', `/api/contracts/${c.id}/send`);
    expect(sendActive.statusCode).toBe(409);
    expect(sendActive.json().error).toMatchObject({
      code: 'INVALID_STATE',
      message: 'An active contract cannot be sent',
    });

    // 2026-07-01T04:59Z is June 30th, 23:59 in Chicago: the last day still runs.
    await expireEndedContracts(h.database.db, new Date('2026-07-01T04:59:00Z'));
    expect(await status()).toBe('active');
    const later = new Date('2026-07-01T05:00:00Z');
    await Promise.all([expireEndedContracts(h.database.db, later), expireEndedContracts(h.database.db, later)]);
    expect(await status()).toBe('expired');
    const log = (await owner.call('GET', `/api/contract-activity/${c.id}`))
      .json()
      .data.map((e: { type: string }) => e.type);
    expect(log).toEqual(['created', 'sent', 'signed', 'activated', 'expired']);
  });
});

describe('contract analytics', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  it('is zeros and nulls on an empty organization', async () => {
    const res = await owner.call('GET', '/api/contract-analytics');
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual({
      totalContracts: 0,
      byStatus: { draft: 0, sent: 0, signed: 0, active: 0, expired: 0, canceled: 0 },
      signingRate: null,
      averageHoursToSign: null,
      activeRevenue: 0,
    });
  });

  it('computes the figures of a known data set', async () => {
    const customer = await createCustomer(h, owner);
    const make = async (value: number) =>
      (
        await owner.call('POST', '/api/contracts', {
          title: `C ${value}`,
          customerId: customer.id,
          services: [{ description: 'Work', unitPrice: value }],
        })
      ).json().data.id as string;
    const set = async (id: string, fields: Partial<typeof contracts.$inferInsert>) =>
      h.admin.db.update(contracts).set(fields).where(eq(contracts.id, id));
    const t0 = new Date('2026-03-01T10:00:00Z');
    const hours = (n: number) => new Date(t0.getTime() + n * 3_600_000);

    await make(100.1); // draft
    await set(await make(200), { status: 'sent', sentAt: t0 });
    await set(await make(300), { status: 'signed', sentAt: t0, signedAt: hours(2) });
    await set(await make(400.45), { status: 'active', sentAt: t0, signedAt: hours(5) });
    await set(await make(0.1), { status: 'active', sentAt: t0, signedAt: hours(1.5) });
    await set(await make(50), { status: 'canceled', sentAt: t0 }); // sent, never signed
    await set(await make(60), { status: 'expired', sentAt: t0, signedAt: hours(24) });

    const res = await owner.call('GET', '/api/contract-analytics');
    expect(res.json().data).toEqual({
      totalContracts: 7,
      byStatus: { draft: 1, sent: 1, signed: 1, active: 2, expired: 1, canceled: 1 },
      // Signed 4 (300, 400.45, 0.1, 60) of 6 ever sent.
      signingRate: 0.6667,
      // (2 + 5 + 1.5 + 24) / 4 = 8.125 → 8.13
      averageHoursToSign: 8.13,
      activeRevenue: 400.55,
    });
  });
});
