import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portalTokens } from '../../src/db/schema/index.js';
import {
  createCustomer,
  deliverMail,
  eventsDuring,
  later,
  line,
  mailText,
  type ReceivedMail,
  setSettings,
  startSmtp,
} from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

describe('sending, mail over SMTP and the customer portal', () => {
  let h: Harness;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let owner: TestUser;
  let customer: Awaited<ReturnType<typeof createCustomer>>;

  beforeAll(async () => {
    smtp = await startSmtp();
    h = await createHarness({ SMTP_URL: smtp.url, BASE_URL: 'http://crm.test' });
    owner = await newTenant(h);
    await setSettings(h, owner.organizationId, { companyName: 'Green Acres Lawn', taxRate: 10 });
    customer = await createCustomer(h, owner, {
      email: 'pat@example.com',
      additionalEmails: ['office@example.com', 'PAT@example.com'],
    });
  });
  afterAll(async () => {
    await h?.close();
    await smtp?.close();
  });

  const portalPath = (url: string) => {
    expect(url.startsWith('http://crm.test/api/portal/pt_')).toBe(true);
    return new URL(url).pathname;
  };
  const open = (path: string) => h.app.inject({ method: 'GET', url: path });
  const act = (path: string, action: string) => h.app.inject({ method: 'POST', url: `${path}/${action}` });
  const lastMail = (): ReceivedMail => smtp.received[smtp.received.length - 1] as ReceivedMail;

  it('estimate: send mails the link, first view → viewed silently, approve, convert', async () => {
    const est = (
      await owner.call('POST', '/api/estimates', {
        customerId: customer.id,
        lineItems: [line('Patio', 2, 250), line('Seeding', 1.5, 33.33)],
        notes: 'Includes cleanup',
      })
    ).json().data;
    expect(est).toMatchObject({ status: 'draft', estimateNumber: 'EST-000001', subtotal: 550, tax: 55, total: 605 });
    const mailsBefore = smtp.received.length;
    const sent = await owner.call('POST', `/api/estimates/${est.id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json().data).toMatchObject({ status: 'sent', emailedTo: ['pat@example.com', 'office@example.com'] });
    expect(sent.json().data.lastEmail).toMatchObject({ status: 'pending', sentAt: null, error: null });
    const path = portalPath(sent.json().data.portalUrl);
    expect(await deliverMail(h)).toBe(1);
    expect(smtp.received.length).toBe(mailsBefore + 1);
    expect(lastMail().to.sort()).toEqual(['office@example.com', 'pat@example.com']);
    const text = mailText(lastMail().raw);
    expect(text).toContain('Subject: Estimate EST-000001 from Green Acres Lawn');
    expect(text).toContain(sent.json().data.portalUrl);
    expect(text).toContain('filename=EST-000001.pdf');
    const shown = (await owner.call('GET', `/api/estimates/${est.id}`)).json().data.lastEmail;
    expect(shown).toMatchObject({ status: 'sent', to: ['pat@example.com', 'office@example.com'], error: null });
    expect(typeof shown.sentAt).toBe('string');

    const viewed = await eventsDuring(h, owner.organizationId, async () => {
      const res = await open(path);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({ type: 'estimate', document: { id: est.id, status: 'viewed' } });
      expect((await open(path)).json().data.document.status).toBe('viewed');
    });
    expect(viewed).toEqual([]);
    const [token] = await h.admin.db.select().from(portalTokens).where(eq(portalTokens.documentId, est.id));
    expect(token?.lastViewedAt).toBeInstanceOf(Date);

    const approved = await eventsDuring(h, owner.organizationId, async () => {
      const res = await act(path, 'approve');
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data.document).toMatchObject({ status: 'approved' });
    });
    expect(approved.map((e) => e.type).sort()).toEqual(['estimate.accepted', 'estimate.status_changed']);
    expect(approved[0]?.data).toMatchObject({ oldStatus: 'VIEWED', newStatus: 'APPROVED', estimateId: est.id });
    expect((await act(path, 'decline')).statusCode).toBe(409);
    expect((await act(path, 'sign')).statusCode).toBe(404);

    const converted = await eventsDuring(h, owner.organizationId, async () => {
      const res = await owner.call('POST', `/api/estimates/${est.id}/convert`);
      expect(res.statusCode, res.body).toBe(200);
      const { estimate, invoice } = res.json().data;
      expect(estimate).toMatchObject({ status: 'converted', invoiceId: invoice.id });
      expect(invoice).toMatchObject({ status: 'draft', estimateId: est.id, subtotal: 550, tax: 55, total: 605 });
      expect(invoice.notes).toBe('Includes cleanup');
      expect(invoice.lineItems.map((l: { description: string; amount: number }) => [l.description, l.amount])).toEqual([
        ['Patio', 500],
        ['Seeding', 50],
      ]);
    });
    expect(converted.map((e) => e.type).sort()).toEqual([
      'estimate.converted',
      'estimate.status_changed',
      'invoice.created',
    ]);
    expect((await owner.call('POST', `/api/estimates/${est.id}/convert`)).statusCode).toBe(409);
  });

  it('estimate: the customer declines; an expired one cannot be approved', async () => {
    const a = (await owner.call('POST', '/api/estimates', { customerId: customer.id, lineItems: [line()] })).json()
      .data;
    const pathA = portalPath((await owner.call('POST', `/api/estimates/${a.id}/send`)).json().data.portalUrl);
    const declined = await act(pathA, 'decline');
    expect(declined.json().data.document.status).toBe('declined');

    const b = (
      await owner.call('POST', '/api/estimates', {
        customerId: customer.id,
        lineItems: [line()],
        estimateDate: '2026-01-01',
        expirationDate: '2026-01-02',
      })
    ).json().data;
    const pathB = portalPath((await owner.call('POST', `/api/estimates/${b.id}/send`)).json().data.portalUrl);
    const late = await act(pathB, 'approve');
    expect(late.statusCode).toBe(409);
    expect(late.json().error.code).toBe('INVALID_STATE');
  });

  it('invoice: send mails the link; the customer sees lines, payments and balance', async () => {
    const inv = (
      await owner.call('POST', '/api/invoices', { customerId: customer.id, lineItems: [line('Mow', 1, 40)] })
    ).json().data;
    const sent = await owner.call('POST', `/api/invoices/${inv.id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json().data).toMatchObject({
      status: 'sent',
      total: 44,
      emailedTo: ['pat@example.com', 'office@example.com'],
    });
    await deliverMail(h);
    const text = mailText(lastMail().raw);
    expect(text).toContain(`Subject: Invoice ${inv.invoiceNumber} from Green Acres Lawn`);
    expect(text).toContain(sent.json().data.portalUrl);
    expect(text).toContain(`filename=${inv.invoiceNumber}.pdf`);
    await owner.call('POST', `/api/invoices/${inv.id}/payments`, { amount: 4, method: 'cash' });
    const path = portalPath(sent.json().data.portalUrl);
    const view = await open(path);
    expect(view.json().data).toMatchObject({
      type: 'invoice',
      document: { id: inv.id, status: 'partially_paid', balance: 40, amountPaid: 4 },
    });
    expect((await act(path, 'approve')).statusCode).toBe(404);
    // A re-send issues a new link and mails again; the status stays.
    const again = await owner.call('POST', `/api/invoices/${inv.id}/send`);
    expect(again.json().data.status).toBe('partially_paid');
    expect(again.json().data.portalUrl).not.toBe(sent.json().data.portalUrl);
  });

  it('bad, foreign-looking and expired tokens are 404', async () => {
    expect((await open('/api/portal/nope')).statusCode).toBe(404);
    expect((await open(`/api/portal/pt_${'A'.repeat(43)}`)).statusCode).toBe(404);
    const inv = (await owner.call('POST', '/api/invoices', { customerId: customer.id, lineItems: [line()] })).json()
      .data;
    const path = portalPath((await owner.call('POST', `/api/invoices/${inv.id}/send`)).json().data.portalUrl);
    expect((await open(path)).statusCode).toBe(200);
    await h.admin.db
      .update(portalTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(portalTokens.documentId, inv.id));
    expect((await open(path)).statusCode).toBe(404);
  });

  it('a customer without email: the send succeeds, nothing is mailed, the link is returned', async () => {
    const silent = await createCustomer(h, owner, { email: null, additionalEmails: [] });
    const inv = (await owner.call('POST', '/api/invoices', { customerId: silent.id, lineItems: [line()] })).json().data;
    await deliverMail(h);
    const before = smtp.received.length;
    const res = await owner.call('POST', `/api/invoices/${inv.id}/send`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ status: 'sent', emailedTo: [] });
    expect(res.json().data.portalUrl).toContain('/api/portal/pt_');
    expect(res.json().data.lastEmail).toBeNull();
    await deliverMail(h);
    expect(smtp.received.length).toBe(before);
  });

  it('a mail server outage delays mail and loses none: send answers 200, every mail arrives once when it is back', async () => {
    await deliverMail(h, later());
    const invoices: Array<{ id: string; invoiceNumber: string }> = [];
    for (let i = 0; i < 3; i++) {
      invoices.push(
        (
          await owner.call('POST', '/api/invoices', { customerId: customer.id, lineItems: [line('Mow', 1, 10 + i)] })
        ).json().data,
      );
    }
    const est = (await owner.call('POST', '/api/estimates', { customerId: customer.id, lineItems: [line()] })).json()
      .data;
    const before = smtp.received.length;
    smtp.state.refuse = true;
    try {
      // Every request answers at once while the server refuses; the state and its event commit.
      const events = await eventsDuring(h, owner.organizationId, async () => {
        for (const inv of invoices) {
          const res = await owner.call('POST', `/api/invoices/${inv.id}/send`);
          expect(res.statusCode, res.body).toBe(200);
          expect(res.json().data).toMatchObject({ status: 'sent', lastEmail: { status: 'pending' } });
        }
        const res = await owner.call('POST', `/api/estimates/${est.id}/send`);
        expect(res.statusCode, res.body).toBe(200);
        const invite = await owner.call('POST', '/api/invitations', { email: 'new.hire@example.com', role: 'member' });
        expect(invite.statusCode, invite.body).toBe(201);
      });
      expect(events.filter((e) => e.type === 'invoice.sent').map((e) => e.data.invoiceId)).toEqual(
        invoices.map((i) => i.id),
      );
      // The worker tries, the server refuses: nothing arrives, the document says why, the job waits to retry.
      expect(await deliverMail(h)).toBe(5);
      expect(await deliverMail(h, later())).toBe(5);
      expect(smtp.received.length).toBe(before);
      const shown = (await owner.call('GET', `/api/invoices/${invoices[0]?.id}`)).json().data.lastEmail;
      expect(shown).toMatchObject({ status: 'pending', sentAt: null });
      expect(shown.error).toMatch(/mailbox unavailable/);
      expect((await owner.call('GET', `/api/estimates/${est.id}`)).json().data.lastEmail.status).toBe('pending');
    } finally {
      smtp.state.refuse = false;
    }
    // Back up: each mail arrives exactly once, however often the worker runs.
    expect(await deliverMail(h, later(4))).toBe(5);
    expect(await deliverMail(h, later(8))).toBe(0);
    const arrived = smtp.received.slice(before).map((m) => mailText(m.raw));
    expect(arrived).toHaveLength(5);
    for (const inv of invoices) {
      expect(arrived.filter((t) => t.includes(`Subject: Invoice ${inv.invoiceNumber} from`))).toHaveLength(1);
      const shown = (await owner.call('GET', `/api/invoices/${inv.id}`)).json().data.lastEmail;
      expect(shown).toMatchObject({ status: 'sent', error: null });
    }
    expect(arrived.filter((t) => t.includes(`Subject: Estimate ${est.estimateNumber} from`))).toHaveLength(1);
    expect(arrived.filter((t) => t.includes('Subject: You have been invited'))).toHaveLength(1);
    const list = (await owner.call('GET', '/api/invoices')).json().data;
    expect(list.find((i: { id: string }) => i.id === invoices[1]?.id).lastEmail.status).toBe('sent');
  });
});
