import { createHash } from 'node:crypto';
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractActivity, contracts } from '../../src/db/schema/index.js';
import { createCustomer, createProperty, eventsOf } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Spec 3.4: "signed contracts cannot be edited (changes require a new contract or an
 * amendment)". POST /api/contracts/{id}/amendments on a signed or active contract makes a
 * draft contract that amends it; the original is left as it is.
 */
describe('contract amendments', () => {
  let h: Harness;
  let owner: TestUser;
  let customer: Awaited<ReturnType<typeof createCustomer>>;
  let propertyId: string;
  let templateId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { name: 'Green Acres LLC', timezone: 'America/Chicago' });
    customer = await createCustomer(h, owner, { firstName: 'Dana', lastName: 'Reyes', email: 'dana@example.com' });
    propertyId = (await createProperty(h, owner, customer.id)).id;
    const t = await owner.call('POST', '/api/contract-templates', {
      name: 'Seasonal',
      body: '"{{title}}" for {{customer.name}} from {{startDate}} to {{endDate}}. Total: USD {{totalValue}}.',
    });
    templateId = t.json().data.id;
  });
  afterAll(async () => h?.close());

  const newContract = async () => {
    const res = await owner.call('POST', '/api/contracts', {
      title: 'Lawn care 2026',
      customerId: customer.id,
      propertyId,
      templateId,
      startDate: '2026-04-01',
      endDate: '2026-10-31',
      services: [{ description: 'Weekly mowing', unitPrice: 19.99, quantity: 3 }],
      terms: 'Payment due monthly.',
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data;
  };
  const portalPath = (url: string) => new URL(url).pathname;
  const send = async (id: string) => {
    const res = await owner.call('POST', `/api/contracts/${id}/send`);
    expect(res.statusCode, res.body).toBe(200);
    return portalPath(res.json().data.portalUrl);
  };
  const sign = async (path: string, signerName = 'Dana Reyes') => {
    const res = await h.app.inject({
      method: 'POST',
      url: `${path}/sign`,
      payload: { signerName },
      headers: { 'user-agent': 'TestBrowser/1.0' },
      remoteAddress: '203.0.113.7',
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const signedContract = async () => {
    const c = await newContract();
    await sign(await send(c.id));
    return c;
  };
  const get = async (id: string) => (await owner.call('GET', `/api/contracts/${id}`)).json().data;
  const counts = async () => ({
    contracts: Number(
      (
        await h.admin.db
          .select({ n: count() })
          .from(contracts)
          .where(eq(contracts.organizationId, owner.organizationId))
      )[0]?.n,
    ),
    activity: Number(
      (
        await h.admin.db
          .select({ n: count() })
          .from(contractActivity)
          .where(eq(contractActivity.organizationId, owner.organizationId))
      )[0]?.n,
    ),
    events: (await eventsOf(h, owner.organizationId)).length,
  });

  it('creates a draft amendment prefilled from a signed contract, with overrides, and logs it on the original', async () => {
    const original = await signedContract();
    const before = await counts();
    const res = await owner.call('POST', `/api/contracts/${original.id}/amendments`, {
      startDate: '2026-07-01',
      services: [{ description: 'Weekly mowing', unitPrice: 21, quantity: 3 }],
      terms: 'Payment due monthly. Price from July: 21.00 per visit.',
    });
    expect(res.statusCode, res.body).toBe(201);
    const a = res.json().data;
    expect(a.id).not.toBe(original.id);
    expect(a).toMatchObject({
      amendsContractId: original.id,
      status: 'draft',
      title: 'Lawn care 2026',
      customerId: customer.id,
      propertyId,
      templateId,
      startDate: '2026-07-01',
      endDate: '2026-10-31', // prefilled
      totalValue: 63,
      terms: 'Payment due monthly. Price from July: 21.00 per visit.',
      sentAt: null,
      signedAt: null,
      signature: null,
      amendments: [],
    });
    expect(a.content).toBe(
      '"Lawn care 2026" for Dana Reyes from 2026-07-01 to 2026-10-31. Total: USD 63.00.\n\n' +
        'Payment due monthly. Price from July: 21.00 per visit.',
    );
    expect(a.activity.map((x: { type: string; description: string }) => [x.type, x.description])).toEqual([
      ['created', `Amendment of ${original.id} created`],
    ]);

    // The original is untouched but for its log and its list of amendments.
    const o = await get(original.id);
    expect(o).toMatchObject({
      status: 'signed',
      amendsContractId: null,
      startDate: '2026-04-01',
      totalValue: original.totalValue,
      terms: original.terms,
      content: original.content,
    });
    expect(o.amendments).toEqual([{ id: a.id, status: 'draft', createdAt: a.createdAt }]);
    expect(o.activity.at(-1)).toMatchObject({ type: 'amended', actorId: owner.userId });
    expect(o.activity.at(-1).description).toContain(a.id);
    // Creating a draft emits nothing (contracts emit on send and sign); two log entries, one row.
    expect(await counts()).toEqual({
      contracts: before.contracts + 1,
      activity: before.activity + 2,
      events: before.events,
    });
    // Lists show the link too.
    const list = (await owner.call('GET', `/api/contracts?customerId=${customer.id}`)).json().data;
    expect(list.find((x: { id: string }) => x.id === a.id).amendsContractId).toBe(original.id);
  });

  it('copies everything without a body, and amends active contracts too', async () => {
    const original = await signedContract();
    await h.admin.db.update(contracts).set({ status: 'active' }).where(eq(contracts.id, original.id));
    const res = await owner.call('POST', `/api/contracts/${original.id}/amendments`);
    expect(res.statusCode, res.body).toBe(201);
    const a = res.json().data;
    for (const k of ['title', 'customerId', 'propertyId', 'templateId', 'startDate', 'endDate', 'services', 'terms']) {
      expect(a[k], k).toEqual(original[k]);
    }
    expect(a.content).toBe(original.content);
    const nulls = await owner.call('POST', `/api/contracts/${original.id}/amendments`, {
      title: 'Lawn care 2026, amended',
      endDate: null,
      terms: null,
      propertyId: null,
    });
    expect(nulls.statusCode).toBe(201);
    expect(nulls.json().data).toMatchObject({ title: 'Lawn care 2026, amended', endDate: null, terms: null });
    expect(nulls.json().data.propertyId).toBeNull();
    const o = await get(original.id);
    expect(o.status).toBe('active');
    expect(o.amendments.map((x: { id: string }) => x.id)).toEqual([a.id, nulls.json().data.id]);
    expect(o.activity.filter((x: { type: string }) => x.type === 'amended')).toHaveLength(2);
  });

  it('is sent and signed like any contract, with evidence and events; the original stays signed', async () => {
    const original = await signedContract();
    const a = (
      await owner.call('POST', `/api/contracts/${original.id}/amendments`, { endDate: '2026-11-30', terms: 'Longer.' })
    ).json().data;
    // A draft amendment can be edited like any draft.
    const edited = await owner.call('PUT', `/api/contracts/${a.id}`, { title: 'Lawn care 2026 (extended)' });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().data.amendsContractId).toBe(original.id);

    const before = (await eventsOf(h, owner.organizationId)).length;
    const path = await send(a.id);
    await sign(path, 'Dana R.');
    const evts = (await eventsOf(h, owner.organizationId)).slice(before);
    expect(evts.map((e) => e.type)).toEqual(['contract.sent', 'contract.signed']);
    expect(evts[1]?.data).toMatchObject({
      contractId: a.id,
      oldStatus: 'SENT',
      newStatus: 'SIGNED',
      contract: { id: a.id, amendsContractId: original.id, status: 'signed' },
    });

    const signed = await get(a.id);
    expect(signed.status).toBe('signed');
    expect(signed.signature).toMatchObject({
      signerName: 'Dana R.',
      ipAddress: '203.0.113.7',
      userAgent: 'TestBrowser/1.0',
      contentSha256: createHash('sha256').update(signed.content, 'utf8').digest('hex'),
    });
    expect(signed.activity.map((x: { type: string }) => x.type)).toEqual(['created', 'updated', 'sent', 'signed']);

    const o = await get(original.id);
    expect(o.status).toBe('signed');
    expect(o.amendments).toEqual([{ id: a.id, status: 'signed', createdAt: a.createdAt }]);
    expect(o.activity.map((x: { type: string }) => x.type).slice(-2)).toEqual(['amended', 'amendment_signed']);
    expect(o.activity.at(-1)).toMatchObject({ actorId: null });
    expect(o.activity.at(-1).description).toContain(a.id);
    expect(o.activity.at(-1).description).toContain('from 2026-04-01');
    // A signed amendment is itself amended, not edited.
    expect((await owner.call('PUT', `/api/contracts/${a.id}`, { terms: 'x' })).statusCode).toBe(409);
    const again = await owner.call('POST', `/api/contracts/${a.id}/amendments`, {});
    expect(again.statusCode).toBe(201);
    expect(again.json().data.amendsContractId).toBe(a.id);
  });

  it('refuses draft, sent, expired and canceled contracts with 409 INVALID_STATE, writing nothing', async () => {
    const draft = await newContract();
    const sent = await newContract();
    await send(sent.id);
    const expired = await signedContract();
    await h.admin.db.update(contracts).set({ status: 'expired' }).where(eq(contracts.id, expired.id));
    const canceled = await signedContract();
    expect((await owner.call('POST', `/api/contracts/${canceled.id}/cancel`)).statusCode).toBe(200);
    const before = await counts();
    for (const c of [draft, sent, expired, canceled]) {
      const res = await owner.call('POST', `/api/contracts/${c.id}/amendments`, { terms: 'x' });
      expect(res.statusCode, c.id).toBe(409);
      expect(res.json().error.code).toBe('INVALID_STATE');
      expect((await get(c.id)).amendments).toEqual([]);
    }
    expect(await counts()).toEqual(before);
  });

  it('refuses bad overrides with 400 and unknown or foreign ids with 404, writing nothing', async () => {
    const original = await signedContract();
    const other = await newTenant(h, { name: 'Other Org' });
    const foreignCustomer = await createCustomer(h, other);
    const foreignProperty = (await createProperty(h, other, foreignCustomer.id)).id;
    const before = await counts();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ startDate: '2026-12-01' }, 'endDate'], // after the original's endDate
      [{ endDate: '2026-01-01' }, 'endDate'],
      [{ startDate: '2026-02-30' }, 'startDate'],
      [{ propertyId: foreignProperty }, 'propertyId'],
      [{ services: [{ description: 'x', unitPrice: 1.005 }] }, 'services.0.unitPrice'],
      [{ customerId: foreignCustomer.id }, 'customerId'], // the customer is the original's
      [{ status: 'active' }, 'status'],
      [{ title: '  ' }, 'title'],
    ];
    for (const [body, field] of cases) {
      const res = await owner.call('POST', `/api/contracts/${original.id}/amendments`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(
        res.json().error.details.map((d: { field: string }) => d.field),
        JSON.stringify(body),
      ).toContain(field);
    }
    // Another organization's contract is 404, exactly like a missing one.
    for (const caller of [other]) {
      const res = await caller.call('POST', `/api/contracts/${original.id}/amendments`, {});
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('NOT_FOUND');
    }
    expect((await owner.call('POST', '/api/contracts/con_missing/amendments', {})).statusCode).toBe(404);
    expect(await counts()).toEqual(before);
    expect((await get(original.id)).amendments).toEqual([]);
    // The other organization sees none of it.
    expect((await other.call('GET', '/api/contracts')).json().data).toEqual([]);
  });
});
