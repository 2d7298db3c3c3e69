import { jobs } from '../../src/db/schema/index.js';
import { newId } from '../../src/platform/ids.js';
import { withBillingOrg } from '../billing-org.js';
import { type BenchPart, fmt, ratio } from '../lib.js';

/*
 * Issue 28: batch invoicing on PostgreSQL through the full HTTP stack (inject).
 * 500 customers with 10 completed, priced visits each (5,000 jobs) in a month;
 * POST /api/invoices/batch bills the month in one call (500 invoices). The baseline
 * is what an owner would do without it: the same 500 invoices (10 lines each) created
 * one by one with POST /api/invoices. The batch runs on three months (three seeds) for
 * its p50; the ratio is baseline time / batch p50.
 */

const CUSTOMERS = 500;
const VISITS_PER_CUSTOMER = 10;
const MONTHS = ['2026-08', '2026-09', '2026-10'];
const LINE = { description: 'Weekly mowing', quantity: 1, unitPrice: 45 };

export const batchInvoicingBench: BenchPart = {
  name: 'batch-invoicing',
  run: () =>
    withBillingOrg(
      { label: 'batch', poolMax: 4, customers: CUSTOMERS, timezone: 'UTC' },
      async ({ organizationId, customerIds, call, seed }) => {
        await seed(async (ctx) => {
          for (const month of MONTHS) {
            const rows = customerIds.flatMap((customerId) =>
              Array.from({ length: VISITS_PER_CUSTOMER }, (_, v) => {
                const day = String(v + 1).padStart(2, '0');
                return {
                  id: newId('job'),
                  organizationId,
                  customerId,
                  status: 'completed',
                  scheduledDate: `${month}-${day}`,
                  completedAt: new Date(`${month}-${day}T15:00:00Z`),
                  lineItems: [
                    {
                      serviceId: null,
                      description: LINE.description,
                      quantity: '1',
                      unitPriceCents: 4500,
                      taxable: true,
                      amountCents: 4500,
                    },
                  ],
                  totalCents: 4500,
                };
              }),
            );
            for (let i = 0; i < rows.length; i += 1000) await ctx.tx.insert(jobs).values(rows.slice(i, i + 1000));
          }
        });

        const batchMs: number[] = [];
        let made = 0;
        for (const month of MONTHS) {
          const started = performance.now();
          const res = await call('POST', '/api/invoices/batch', { from: `${month}-01`, to: `${month}-28` });
          batchMs.push(performance.now() - started);
          if (res.statusCode !== 201) throw new Error(`batch answered ${res.statusCode}: ${res.body}`);
          made = res.json().data.invoices.length;
        }
        const p50 = [...batchMs].sort((a, b) => a - b)[1] as number;

        const lineItems = Array.from({ length: VISITS_PER_CUSTOMER }, () => LINE);
        // Untimed first: the one-invoice route is compiled before it is timed (each part runs in
        // a fresh process, bench/run.ts; the batches above warmed only the batch route).
        for (const customerId of customerIds.slice(0, 50))
          await call('POST', '/api/invoices', { customerId, lineItems });
        const started = performance.now();
        for (const customerId of customerIds) {
          const res = await call('POST', '/api/invoices', { customerId, lineItems });
          if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}`);
        }
        const oneByOneMs = performance.now() - started;
        return [
          '## batch invoicing (PostgreSQL, inject)',
          '',
          `${fmt(CUSTOMERS * VISITS_PER_CUSTOMER)} completed visits of ${fmt(CUSTOMERS)} customers per month; the batch made ${made} invoices per run.`,
          '',
          '| Operation | time | ratio (one by one / batch) |',
          '|---|---|---|',
          `| POST /api/invoices/batch, one month (p50 of ${MONTHS.length}: ${batchMs.map((m) => fmt(m)).join(', ')} ms) | ${fmt(p50)} ms | ${fmt(ratio(oneByOneMs, p50), 2)} |`,
          `| ${CUSTOMERS} × POST /api/invoices (10 lines each), one after the other (baseline) | ${fmt(oneByOneMs)} ms | 1.00 |`,
        ].join('\n');
      },
    ),
};
