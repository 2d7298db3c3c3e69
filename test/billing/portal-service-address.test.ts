import { PDFParse } from 'pdf-parse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobLineDescription } from '../../src/flows/bill-jobs.js';
import { createCustomer, createProperty } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

async function textOf(pdf: Buffer): Promise<string> {
  const parser = new PDFParse({ data: new Uint8Array(pdf) });
  try {
    return (await parser.getText()).text;
  } finally {
    await parser.destroy();
  }
}

/*
 * Issue 48: the customer page showed a billed visit's line as "2026-11-28 — Weekly mowing"
 * beside dates written "Nov 27, 2026", and neither the page nor the PDF said where the work
 * was done (the document's property).
 */
describe('the customer page and the PDF show the service address and readable line dates', () => {
  let h: Harness;
  let owner: TestUser;
  let customerId: string;
  let propertyId: string;

  beforeAll(async () => {
    h = await createHarness({ BASE_URL: 'http://crm.test' });
    owner = await newTenant(h);
    customerId = (await createCustomer(h, owner, { billingAddress: '9 Billing Rd', billingCity: 'Elsewhere' })).id;
    propertyId = (await createProperty(h, owner, customerId, { street: '400 Oak Ave', name: 'Front lot' })).id;
  });
  afterAll(async () => h?.close());

  const send = async (kind: 'invoices' | 'estimates', withProperty: boolean) => {
    const created = await owner.call('POST', `/api/${kind}`, {
      customerId,
      ...(withProperty ? { propertyId } : {}),
      lineItems: [{ description: jobLineDescription('2026-11-28', 'Weekly mowing'), quantity: 1, unitPrice: 45 }],
    });
    expect(created.statusCode, created.body).toBe(201);
    const sent = await owner.call('POST', `/api/${kind}/${created.json().data.id}/send`);
    expect(sent.statusCode, sent.body).toBe(200);
    return { id: created.json().data.id as string, path: new URL(sent.json().data.portalUrl).pathname };
  };

  it.each(['invoices', 'estimates'] as const)(
    '%s: the page writes the line date like the others and names the property',
    async (kind) => {
      const { path } = await send(kind, true);
      const page = await h.app.inject({ method: 'GET', url: path.replace('/api/portal/', '/portal/') });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Nov 28, 2026 — Weekly mowing');
      expect(page.body).not.toContain('2026-11-28 — ');
      expect(page.body).toMatch(/<dt>Service address<\/dt><dd>Front lot, 400 Oak Ave, Springfield, IL 62704<\/dd>/);
    },
  );

  it('leaves the service address out when the document names no property', async () => {
    const { path } = await send('invoices', false);
    const page = await h.app.inject({ method: 'GET', url: path.replace('/api/portal/', '/portal/') });
    expect(page.body).not.toContain('Service address');
  });

  it.each(['invoices', 'estimates'] as const)('%s: the PDF prints the service address', async (kind) => {
    const { id } = await send(kind, true);
    const pdf = await owner.call('GET', `/api/${kind}/${id}/pdf`);
    expect(pdf.statusCode).toBe(200);
    const text = await textOf(pdf.rawPayload);
    expect(text).toContain('SERVICE ADDRESS');
    expect(text).toContain('400 Oak Ave');
    expect(text).toContain('9 Billing Rd');
  });
});
