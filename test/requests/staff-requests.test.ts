import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mailJobs } from '../../src/db/schema/index.js';
import { countRows, eventsDuring, eventsOf } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { postRequest, solvedField } from './helpers.js';

describe('requests from the public: the staff side', () => {
  let h: Harness;
  let owner: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let edging: string;
  const slug = `staff-${process.pid}`;

  async function send(extra: Record<string, unknown> = {}) {
    const res = await postRequest(h, slug, {
      firstName: 'Jo',
      lastName: 'Birch',
      email: 'Jo.Birch@example.com',
      phone: '(555) 010-2233',
      address: { street: '9 Pine Road', city: 'Springfield' },
      serviceIds: [edging],
      description: 'Edging and a mow',
      preferredDates: ['2099-05-01'],
      altcha: await solvedField(h, slug),
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id as string;
  }

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    member = await addMember(h, owner, 'member');
    stranger = await newTenant(h);
    edging = (await owner.call('POST', '/api/services', { name: 'Edging', unitPrice: 30, bookable: true })).json().data
      .id;
    expect((await owner.call('PATCH', '/api/settings', { bookingSlug: slug })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a new request mails the owners through the outbox and lists first; another organization sees 404', async () => {
    const mails = await countRows(h, mailJobs, owner.organizationId);
    const id = await send();
    expect(await countRows(h, mailJobs, owner.organizationId)).toBe(mails + 1);
    const list = await member.call('GET', '/api/requests');
    expect(list.statusCode).toBe(200);
    expect(list.json().data[0].id).toBe(id);
    const one = await member.call('GET', `/api/requests/${id}`);
    expect(one.json().data).toMatchObject({ id, status: 'new', duplicateOf: null, matchedCustomerId: null });
    expect((await stranger.call('GET', `/api/requests/${id}`)).statusCode).toBe(404);
    expect((await stranger.call('POST', `/api/requests/${id}/decline`)).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: '/api/requests' })).statusCode).toBe(401);
  });

  it('a new request is mailed to the owners even with notifyOwners off (that setting covers link actions)', async () => {
    expect((await owner.call('PATCH', '/api/settings', { notifyOwners: false })).statusCode).toBe(200);
    try {
      const mails = await countRows(h, mailJobs, owner.organizationId);
      await send({ email: 'quiet.owner@example.com', phone: undefined });
      expect(await countRows(h, mailJobs, owner.organizationId)).toBe(mails + 1);
    } finally {
      expect((await owner.call('PATCH', '/api/settings', { notifyOwners: true })).statusCode).toBe(200);
    }
  });

  it('convert to an estimate for a new customer; converting twice → 409; a second request matches that customer', async () => {
    const id = await send({ email: 'new.person@example.com', phone: undefined });
    const during = await eventsDuring(h, owner.organizationId, async () => {
      const res = await owner.call('POST', `/api/requests/${id}/convert`, { to: 'estimate' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ status: 'converted', estimateId: expect.stringMatching(/^est_/) });
    });
    expect(during.map((e) => e.type).sort()).toEqual(
      ['customer.created', 'estimate.created', 'request.converted'].sort(),
    );
    const converted = (await owner.call('GET', `/api/requests/${id}`)).json().data;
    const estimate = (await owner.call('GET', `/api/estimates/${converted.estimateId}`)).json().data;
    expect(estimate).toMatchObject({ customerId: converted.customerId, status: 'draft' });
    expect(estimate.lineItems.map((l: { description: string }) => l.description)).toEqual(['Edging']);
    const twice = await owner.call('POST', `/api/requests/${id}/convert`, { to: 'job' });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().error.code).toBe('INVALID_STATE');
    // Same email in another case: a duplicate of the first, matched to the customer made above.
    const second = await send({ email: 'NEW.person@example.com', phone: undefined });
    const detail = (await owner.call('GET', `/api/requests/${second}`)).json().data;
    expect(detail).toMatchObject({ duplicateOf: id, matchedCustomerId: converted.customerId });
    const job = await owner.call('POST', `/api/requests/${second}/convert`, { to: 'job', scheduledDate: '2099-05-02' });
    expect(job.statusCode, job.body).toBe(200);
    expect(job.json().data).toMatchObject({ customerId: converted.customerId, jobId: expect.stringMatching(/^job_/) });
    const customers = (
      await owner.call('GET', '/api/customers', undefined, { query: { search: 'new.person' } })
    ).json();
    expect(customers.data).toHaveLength(1);
    // Deleting the job the request became: the request lets go of it (no foreign-key error).
    const del = await owner.call('DELETE', `/api/jobs/${job.json().data.jobId}`);
    expect(del.statusCode, del.body).toBe(204);
    expect((await owner.call('GET', `/api/requests/${second}`)).json().data.jobId).toBeNull();
    const delEstimate = await owner.call('DELETE', `/api/estimates/${converted.estimateId}`);
    expect(delEstimate.statusCode, delEstimate.body).toBe(204);
    // Erasing the customer erases the requester's data on the requests converted for it.
    const erased = await owner.call('POST', `/api/customers/${converted.customerId}/anonymize`);
    expect(erased.statusCode, erased.body).toBe(200);
    const after = (await owner.call('GET', `/api/requests/${id}`)).json().data;
    expect(after).toMatchObject({ firstName: 'Anonymized', email: null, phone: null, smsConsentEvidence: null });
  });

  it('convert with a customerId of another organization → 400; decline then archive; events', async () => {
    const id = await send();
    const foreign = await stranger.call('POST', '/api/customers', { firstName: 'Other' });
    const bad = await owner.call('POST', `/api/requests/${id}/convert`, {
      to: 'estimate',
      customerId: foreign.json().data.id,
    });
    expect(bad.statusCode).toBe(400);
    expect((await owner.call('POST', `/api/requests/${id}/convert`, { to: 'invoice' })).statusCode).toBe(400);
    const declined = await owner.call('POST', `/api/requests/${id}/decline`, { reason: 'Outside our area' });
    expect(declined.statusCode, declined.body).toBe(200);
    expect(declined.json().data).toMatchObject({ status: 'declined', declineReason: 'Outside our area' });
    expect((await owner.call('POST', `/api/requests/${id}/decline`)).statusCode).toBe(409);
    expect((await owner.call('POST', `/api/requests/${id}/convert`, { to: 'job' })).statusCode).toBe(409);
    const archived = await owner.call('POST', `/api/requests/${id}/archive`);
    expect(archived.json().data.status).toBe('archived');
    expect((await owner.call('POST', `/api/requests/${id}/archive`)).statusCode).toBe(409);
    const filtered = await owner.call('GET', '/api/requests', undefined, { query: { status: 'archived' } });
    expect(filtered.json().data.map((r: { id: string }) => r.id)).toEqual([id]);
    expect((await owner.call('GET', '/api/requests', undefined, { query: { status: 'nope' } })).statusCode).toBe(400);
    const types = (await eventsOf(h, owner.organizationId)).map((e) => e.type);
    expect(types).toContain('request.created');
    expect(types).toContain('request.declined');
  });

  it('records the form’s texting consent on the customer it converts to, with the form’s evidence', async () => {
    const id = await send({ email: 'texts.ok@example.com', phone: '(555) 010-7788', smsConsent: true });
    const converted = await owner.call('POST', `/api/requests/${id}/convert`, { to: 'job' });
    expect(converted.statusCode, converted.body).toBe(200);
    const customerId = converted.json().data.customerId as string;
    const history = await owner.call('GET', `/api/customers/${customerId}/sms-consent`);
    expect(history.statusCode, history.body).toBe(200);
    const [change] = history.json().data;
    expect(change).toMatchObject({ status: 'opted_in', source: 'request_form' });
    expect(change.evidence).toContain('wording');
    const without = await send({ email: 'no.texts@example.com', phone: '(555) 010-7799' });
    const other = await owner.call('POST', `/api/requests/${without}/convert`, { to: 'job' });
    const none = await owner.call('GET', `/api/customers/${other.json().data.customerId}/sms-consent`);
    expect(none.json().data).toEqual([]);
  });
});
