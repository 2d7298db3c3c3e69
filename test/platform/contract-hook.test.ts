import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkEvent, checkResponse, takeReport } from '../contract.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { sampleEventData } from '../webhooks/helpers.js';

/**
 * The harness's contract check (test/contract.ts) must be able to fail: each case below is
 * a drift it has to report. takeReport() empties the list, so this file's own afterAll
 * (test/contract-setup.ts) still sees only what the real requests produced.
 */
describe('the contract check of the test harness', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  const json = { 'content-type': 'application/json; charset=utf-8' };
  const envelope = (event: string, data: Record<string, unknown>) =>
    JSON.stringify({ id: 'dlv_1', event, timestamp: new Date().toISOString(), organizationId: 'org_1', data });

  it('passes real answers and real event shapes', async () => {
    expect((await owner.call('GET', '/api/customers')).statusCode).toBe(200);
    checkEvent(envelope('invoice.paid', sampleEventData('invoice.paid')));
    checkEvent(envelope('workflow.anything', { free: 'form' }));
    const report = takeReport();
    expect(report.mismatches).toEqual([]);
    // The harness's inject really goes through the check (sign-up, organization, the list).
    expect(report.checkedResponses).toBeGreaterThanOrEqual(3);
    expect(report.checkedEvents).toBe(2);
  });

  it('reports an undeclared status, a body that breaks the schema, and money typed as a string', () => {
    checkResponse('GET', '/api/customers', { statusCode: 418, headers: json, body: '{}' });
    checkResponse('GET', '/api/customers/cus_1?x=1', {
      statusCode: 200,
      headers: json,
      body: JSON.stringify({ data: { id: 5 } }),
    });
    checkEvent(envelope('invoice.paid', { ...sampleEventData('invoice.paid'), amountDue: '10.00' }));
    checkEvent(envelope('customer.deleted', { customerId: 'cus_1', extra: true }));
    const { mismatches } = takeReport();
    expect(mismatches).toHaveLength(4);
    expect(mismatches[0]).toMatch(/^GET \/api\/customers → 418: status not declared/);
    expect(mismatches[1]).toMatch(/^GET \/api\/customers\/\{id\} → 200: \/data/);
    expect(mismatches[2]).toMatch(/^webhook invoice\.paid: \/data\/amountDue must be number/);
    expect(mismatches[3]).toMatch(/^webhook customer\.deleted: \/data must NOT have additional properties/);
  });

  it('checks the status alone for answers that are not JSON', () => {
    checkResponse('GET', '/api/invoices/inv_1/pdf', {
      statusCode: 200,
      headers: { 'content-type': 'application/pdf' },
      body: '%PDF',
    });
    checkResponse('GET', '/api/invoices/inv_1/pdf', {
      statusCode: 302,
      headers: { 'content-type': 'text/html' },
      body: '',
    });
    expect(takeReport().mismatches).toEqual([
      expect.stringMatching(/^GET \/api\/invoices\/\{id\}\/pdf → 302: status not declared/),
    ]);
  });
});
