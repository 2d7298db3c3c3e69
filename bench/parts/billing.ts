import { withBillingOrg } from '../billing-org.js';
import { type BenchPart, fmt, ratio } from '../lib.js';

/*
 * Billing on PostgreSQL, through the full HTTP stack (inject): creating invoices
 * (counter row lock + lines + outbox event) and recording payments on ONE invoice
 * (every request queues on the invoice's row lock), against reading one invoice
 * with the same authentication and tenancy cost. Concurrency 10.
 */

const CONCURRENCY = 10;
const WARM_UP = 200;

async function rate(total: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) await op(next++);
    }),
  );
  return (total / (performance.now() - started)) * 1000;
}

export const billingBench: BenchPart = {
  name: 'billing',
  run: () =>
    withBillingOrg({ label: 'billing', poolMax: CONCURRENCY, customers: 1 }, async ({ call, customerIds }) => {
      const [customerId] = customerIds;
      const body = {
        customerId,
        lineItems: [
          { description: 'Mowing', quantity: 1, unitPrice: 45 },
          { description: 'Edging', quantity: 2.5, unitPrice: 12.4 },
          { description: 'Mulch', quantity: 3, unitPrice: 33.33 },
        ],
      };
      const first = (await call('POST', '/api/invoices', body)).json().data;
      // Untimed first, each operation as timed below (payments on an invoice of their own): the
      // part runs in a fresh process (bench/run.ts), so its first requests would be measured cold.
      const warm = (
        await call('POST', '/api/invoices', {
          customerId,
          lineItems: [{ description: 'x', quantity: 1, unitPrice: 1000 }],
        })
      ).json().data;
      await rate(WARM_UP, () => call('GET', `/api/invoices/${first.id}`));
      await rate(WARM_UP, () => call('POST', '/api/invoices', body));
      await rate(WARM_UP, () => call('POST', `/api/invoices/${warm.id}/payments`, { amount: 1, method: 'cash' }));
      const n = 400;
      const read = await rate(n, () => call('GET', `/api/invoices/${first.id}`));
      const create = await rate(n, () => call('POST', '/api/invoices', body));
      const big = (
        await call('POST', '/api/invoices', {
          customerId,
          lineItems: [{ description: 'x', quantity: 1, unitPrice: 1_000_000 }],
        })
      ).json().data;
      const pay = await rate(n, () => call('POST', `/api/invoices/${big.id}/payments`, { amount: 1, method: 'cash' }));
      const last = (await call('GET', `/api/invoices/${big.id}`)).json().data;
      return [
        '## billing (PostgreSQL, inject, concurrency 10)',
        '',
        '| Operation | req/s | ratio to reading one invoice |',
        '|---|---|---|',
        `| GET /api/invoices/{id} (baseline) | ${fmt(read)} | 1.00 |`,
        `| POST /api/invoices (3 lines, numbered, event) | ${fmt(create)} | ${fmt(ratio(create, read), 2)} |`,
        `| POST /api/invoices/{id}/payments, all on one invoice | ${fmt(pay)} | ${fmt(ratio(pay, read), 2)} |`,
        '',
        `Payments recorded: ${last.payments.length} of ${n}, amountPaid ${last.amountPaid} (must equal the count).`,
      ].join('\n');
    }),
};
