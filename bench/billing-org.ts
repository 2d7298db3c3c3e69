import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/client.js';
import { customers } from '../src/db/schema/index.js';
import { newId } from '../src/platform/ids.js';
import { type Ctx, inTenant } from '../src/platform/tenancy.js';
import { createBenchDatabase } from './lib.js';

/** A signed-in owner of a fresh organization on a fresh PostgreSQL database, through the full HTTP stack. */
export interface BenchOrg {
  app: FastifyInstance;
  database: Database;
  organizationId: string;
  customerIds: string[];
  call(method: 'GET' | 'POST', url: string, payload?: object): Promise<LightMyRequestResponse>;
  /** Seeds rows directly, as the owner's organization (what the API would have made, faster). */
  seed<T>(fn: (ctx: Ctx) => Promise<T>): Promise<T>;
}

/**
 * The set-up the billing parts share: a migrated database, the app on it, an owner
 * signed up with an organization (`timezone`) and `customers` customers inserted
 * directly; `fn` measures, then everything is closed and the database dropped.
 */
export async function withBillingOrg<T>(
  opts: { label: string; poolMax: number; customers: number; timezone?: string },
  fn: (org: BenchOrg) => Promise<T>,
): Promise<T> {
  const db = await createBenchDatabase(opts.label);
  const database = await openDatabase({ databaseUrl: db.url, poolMax: opts.poolMax });
  const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', DATA_DIR: 'memory://' });
  const app = await buildApp(config, database);
  try {
    const signUp = await app.inject({
      method: 'POST',
      url: '/api/auth/sign-up/email',
      payload: { name: 'Bench', email: `bench-${opts.label}@example.com`, password: 'correct horse battery' },
    });
    const cookie = String(signUp.headers['set-cookie']).split(';')[0] as string;
    const org = await app.inject({
      method: 'POST',
      url: '/api/organizations',
      headers: { cookie },
      payload: { name: opts.label, ...(opts.timezone ? { timezone: opts.timezone } : {}) },
    });
    const organizationId = org.json().data.id as string;
    const seed = <R>(f: (ctx: Ctx) => Promise<R>) =>
      inTenant(database.db, organizationId, { kind: 'system', id: 'bench', role: 'owner' }, f);
    const customerIds = Array.from({ length: opts.customers }, () => newId('cus'));
    await seed(async (ctx) => {
      for (let i = 0; i < customerIds.length; i += 1000) {
        await ctx.tx
          .insert(customers)
          .values(
            customerIds.slice(i, i + 1000).map((id, n) => ({ id, organizationId, firstName: `Customer ${i + n}` })),
          );
      }
    });
    const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
      app.inject({ method, url, headers: { cookie }, ...(payload ? { payload } : {}) });
    return await fn({ app, database, organizationId, customerIds, call, seed });
  } finally {
    await app.close();
    await database.close();
    await db.drop();
  }
}
