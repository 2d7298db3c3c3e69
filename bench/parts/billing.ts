import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { customers } from '../../src/db/schema/index.js';
import { newId } from '../../src/platform/ids.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

/*
 * Billing on PostgreSQL, through the full HTTP stack (inject): creating invoices
 * (counter row lock + lines + outbox event) and recording payments on ONE invoice
 * (every request queues on the invoice's row lock), against reading one invoice
 * with the same authentication and tenancy cost. Concurrency 10.
 */

const CONCURRENCY = 10;

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
  async run() {
    const db = await createBenchDatabase('billing');
    const database = await openDatabase({ databaseUrl: db.url, poolMax: CONCURRENCY });
    const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', DATA_DIR: 'memory://' });
    const app = await buildApp(config, database);
    try {
      const signUp = await app.inject({
        method: 'POST',
        url: '/api/auth/sign-up/email',
        payload: { name: 'Bench', email: 'bench@example.com', password: 'correct horse battery' },
      });
      const cookie = String(signUp.headers['set-cookie']).split(';')[0] as string;
      const org = await app.inject({
        method: 'POST',
        url: '/api/organizations',
        headers: { cookie },
        payload: { name: 'B' },
      });
      const organizationId = org.json().data.id as string;
      const customerId = newId('cus');
      await inTenant(database.db, organizationId, { kind: 'system', id: 'bench', role: 'owner' }, (ctx) =>
        ctx.tx.insert(customers).values({ id: customerId, organizationId, firstName: 'Pat' }),
      );
      const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
        app.inject({ method, url, headers: { cookie }, ...(payload ? { payload } : {}) });
      const body = {
        customerId,
        lineItems: [
          { description: 'Mowing', quantity: 1, unitPrice: 45 },
          { description: 'Edging', quantity: 2.5, unitPrice: 12.4 },
          { description: 'Mulch', quantity: 3, unitPrice: 33.33 },
        ],
      };
      const first = (await call('POST', '/api/invoices', body)).json().data;
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
    } finally {
      await app.close();
      await database.close();
      await db.drop();
    }
  },
};
