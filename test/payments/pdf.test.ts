import { readFileSync } from 'node:fs';
import { PDFParse } from 'pdf-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, deliverMail, setSettings } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { pay } from './helpers.js';

async function textOf(pdf: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

describe('PDF documents', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  const lines = [
    { description: 'Spring mowing, front and back lawn', quantity: 2, unitPrice: 45 },
    { description: 'Hedge trimming', quantity: 1.5, unitPrice: 60.1 },
    { description: 'Mulch', quantity: 3, unitPrice: 12.25, taxable: false },
  ];

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    await setSettings(h, owner.organizationId, {
      companyName: 'Greenleaf Lawn & Snow',
      companyAddress: '12 Garden Way, Springfield',
      companyPhone: '555-0100',
      taxRate: 8.25,
    });
    customerId = (
      await createCustomer(h, owner, {
        firstName: 'Dana',
        lastName: 'Whitfield',
        billingAddress: '9 Oak Lane',
        billingCity: 'Springfield',
      })
    ).id;
  });
  afterAll(async () => h?.close());

  it('renders an invoice with company, customer, every line, totals, payments, status and due date', async () => {
    const inv = (
      await owner.call('POST', '/api/invoices', { customerId, lineItems: lines, dueDate: '2099-03-01' })
    ).json().data;
    await owner.call('POST', `/api/invoices/${inv.id}/send`);
    await pay(owner, inv.id, 50, 'check');
    const res = await owner.call('GET', `/api/invoices/${inv.id}/pdf`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    const text = await textOf(res.rawPayload);
    expect(text).toContain(inv.invoiceNumber);
    for (const l of lines) expect(text).toContain(l.description);
    expect(inv.total).toBe(231.76); // 90 + 90.15 + 36.75 = 216.90, tax 8.25 % of 180.15 = 14.86
    for (const s of [
      '231.76',
      '216.90',
      '14.86',
      '181.76',
      '50.00',
      'Greenleaf Lawn',
      'Dana Whitfield',
      '9 Oak Lane',
    ]) {
      expect(text).toContain(s);
    }
    expect(text).toContain('PARTIALLY PAID');
    expect(text).toContain('2099-03-01');
    expect((await owner.call('GET', '/api/invoices/inv_missing/pdf')).statusCode).toBe(404);
  });

  it('renders an estimate, and long documents over several pages', async () => {
    const many = Array.from({ length: 60 }, (_, i) => ({ description: `Visit ${i + 1}`, quantity: 1, unitPrice: 10 }));
    const est = (await owner.call('POST', '/api/estimates', { customerId, lineItems: many })).json().data;
    const res = await owner.call('GET', `/api/estimates/${est.id}/pdf`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    const text = await textOf(res.rawPayload);
    expect(text).toContain(est.estimateNumber);
    for (const l of many) expect(text).toContain(l.description);
    expect(text).toContain('649.50'); // 600 + 8.25 %
    expect(text).toContain('DRAFT');
  });

  it('attaches the PDF to the send mail and serves it from the portal link', async () => {
    const inv = (await owner.call('POST', '/api/invoices', { customerId, lineItems: lines })).json().data;
    const sent = (await owner.call('POST', `/api/invoices/${inv.id}/send`)).json().data;
    await deliverMail(h);
    const mails = readFileSync(h.config.mailOutboxFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const mail = mails.find((m) => m.subject.includes(inv.invoiceNumber));
    expect(mail.attachments).toHaveLength(1);
    expect(mail.attachments[0]).toMatchObject({ filename: `${inv.invoiceNumber}.pdf`, contentType: 'application/pdf' });
    const attached = await textOf(Buffer.from(mail.attachments[0].contentBase64, 'base64'));
    expect(attached).toContain(inv.invoiceNumber);
    expect(attached).toContain('SENT');

    const token = new URL(sent.portalUrl).pathname.split('/').pop();
    const portal = await h.app.inject({ method: 'GET', url: `/api/portal/${token}/pdf` });
    expect(portal.statusCode).toBe(200);
    expect(portal.headers['content-type']).toBe('application/pdf');
    expect(await textOf(portal.rawPayload)).toContain(inv.invoiceNumber);
    const bad = await h.app.inject({ method: 'GET', url: '/api/portal/pt_notarealtokenatallxxxxxxxx/pdf' });
    expect(bad.statusCode).toBe(404);

    const est = (await owner.call('POST', '/api/estimates', { customerId, lineItems: lines })).json().data;
    await owner.call('POST', `/api/estimates/${est.id}/send`);
    await deliverMail(h);
    const estMail = readFileSync(h.config.mailOutboxFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((m) => m.subject.includes(est.estimateNumber));
    expect(await textOf(Buffer.from(estMail.attachments[0].contentBase64, 'base64'))).toContain(est.estimateNumber);
  });
});
