import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailJobs } from '../../src/db/schema/index.js';
import { createCustomer, line } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/**
 * The office hears at once when a customer approves an estimate or signs a contract through
 * their link (issue 48): a mail to every owner, queued with the change, unless `notifyOwners`
 * is off. A staff member's own approval mails nobody, and the document's lastEmail stays its own.
 */
describe('owners mailed on a customer approval or signature', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { name: 'Green Acres LLC' });
    await addMember(h, owner, 'admin');
    customerId = (await createCustomer(h, owner, { email: 'dana@example.com' })).id;
  });
  afterAll(async () => h?.close());

  const notices = (documentId: string) =>
    h.admin.db
      .select()
      .from(mailJobs)
      .where(and(eq(mailJobs.documentType, 'owner_notice'), eq(mailJobs.documentId, documentId)));

  async function sentEstimate(): Promise<{ id: string; path: string; number: string }> {
    const est = await owner.call('POST', '/api/estimates', { customerId, lineItems: [line('Patio', 2, 250)] });
    expect(est.statusCode, est.body).toBe(201);
    const sent = await owner.call('POST', `/api/estimates/${est.json().data.id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    return {
      id: est.json().data.id,
      path: new URL(sent.json().data.portalUrl).pathname,
      number: est.json().data.estimateNumber,
    };
  }

  it('mails the owners (not the admin) when the customer approves, and keeps the estimate’s lastEmail its own', async () => {
    const est = await sentEstimate();
    expect((await h.app.inject({ method: 'POST', url: `${est.path}/approve` })).statusCode).toBe(200);
    const [mail, ...more] = await notices(est.id);
    expect(more).toEqual([]);
    expect(mail?.to).toEqual([owner.email]);
    expect(mail?.subject).toBe(`Estimate ${est.number} approved ($500.00)`);
    expect(mail?.body).toContain('approved estimate');
    expect(mail?.html).toContain('<h1');
    const view = (await owner.call('GET', `/api/estimates/${est.id}`)).json().data;
    expect(view.lastEmail.to).toEqual(['dana@example.com']);
  });

  it('mails nobody for a staff approval, for a decline, or when the setting is off', async () => {
    const staff = await sentEstimate();
    expect((await owner.call('POST', `/api/estimates/${staff.id}/approve`)).statusCode).toBe(200);
    const declined = await sentEstimate();
    expect((await h.app.inject({ method: 'POST', url: `${declined.path}/decline` })).statusCode).toBe(200);

    const off = await owner.call('PATCH', '/api/settings', { notifyOwners: false });
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().data.notifyOwners).toBe(false);
    const quiet = await sentEstimate();
    expect((await h.app.inject({ method: 'POST', url: `${quiet.path}/approve` })).statusCode).toBe(200);
    for (const e of [staff, declined, quiet]) expect(await notices(e.id)).toEqual([]);
    expect((await owner.call('PATCH', '/api/settings', { notifyOwners: true })).json().data.notifyOwners).toBe(true);
    expect((await owner.call('PATCH', '/api/settings', { notifyOwners: 'yes' })).statusCode).toBe(400);
  });

  it('mails the owners when the customer signs a contract', async () => {
    const t = await owner.call('POST', '/api/contract-templates', {
      name: 'Seasonal',
      body: 'Agreement "{{title}}" with {{customer.name}}, total {{totalValue}}.',
    });
    expect(t.statusCode, t.body).toBe(201);
    const c = await owner.call('POST', '/api/contracts', {
      title: 'Lawn care 2027',
      customerId,
      templateId: t.json().data.id,
      startDate: '2027-04-01',
      endDate: '2027-10-31',
      services: [{ description: 'Weekly mowing', unitPrice: 40 }],
    });
    expect(c.statusCode, c.body).toBe(201);
    const id = c.json().data.id;
    const sent = await owner.call('POST', `/api/contracts/${id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    const path = new URL(sent.json().data.portalUrl).pathname;
    const signed = await h.app.inject({ method: 'POST', url: `${path}/sign`, payload: { signerName: 'Dana Reyes' } });
    expect(signed.statusCode, signed.body).toBe(200);
    const [mail] = await notices(id);
    expect(mail?.to).toEqual([owner.email]);
    expect(mail?.subject).toBe('Contract "Lawn care 2027" signed by Dana Reyes');
  });
});
