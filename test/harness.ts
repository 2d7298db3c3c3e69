import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { eq } from 'drizzle-orm';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { inject } from 'vitest';
import { type BuildOptions, buildApp } from '../src/app.js';
import { type Config, loadConfig, type Plan } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/client.js';
import { organizations } from '../src/db/schema/index.js';
import { bumpAuthGenerationAsPlatform } from '../src/platform/auth/revocations.js';
import { asPlatform } from '../src/platform/cross-tenant.js';
import { newId } from '../src/platform/ids.js';
import { checkResponse, useDocumentOf } from './contract.js';
import { createFromTemplate, withDatabase, withUser } from './global-setup.js';

let counter = 0;

/**
 * A fresh, migrated database for one test file (see global-setup.ts): `database` is
 * what the app gets (on PostgreSQL the least-privilege service role), `admin` a
 * superuser handle on the same database for tests that inspect or seed rows directly.
 */
export async function createTestDatabases(): Promise<{ database: Database; admin: Database }> {
  const info = inject('database');
  if (info.kind === 'postgres') {
    const name = `${info.prefix}_${newId('db').slice(3).toLowerCase()}`;
    const admin = new pg.Client({ connectionString: info.url });
    await admin.connect();
    try {
      await createFromTemplate(admin, name, info.template);
    } finally {
      await admin.end();
    }
    const url = withDatabase(info.url, name);
    return {
      database: await openDatabase({ databaseUrl: withUser(url, info.service), poolMax: 10 }),
      admin: await openDatabase({ databaseUrl: url, poolMax: 4 }),
    };
  }
  const blob = new Blob([readFileSync(info.dump)]);
  const client = await PGlite.create({ loadDataDir: blob, extensions: { pg_trgm } });
  // PGlite has one user, a superuser: the same handle serves both.
  const database = await openDatabase({ pglite: client });
  return { database, admin: database };
}

/** The app's database alone (see createTestDatabases). */
export async function createTestDatabase(): Promise<Database> {
  const { database, admin } = await createTestDatabases();
  if (admin !== database) await admin.close();
  return database;
}

export interface Harness {
  app: FastifyInstance;
  database: Database;
  /** Superuser handle on the same database, for direct inspection and seeding (never the app's). */
  admin: Database;
  config: Config;
  close(): Promise<void>;
}

export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  DATA_DIR: 'memory://',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  RATE_LIMIT_PER_MINUTE: '100000',
  LOG_LEVEL: 'silent',
};

/** Builds the app on a fresh database. `env` overrides configuration variables. */
export async function createHarness(env: Record<string, string> = {}, options: BuildOptions = {}): Promise<Harness> {
  const { database, admin } = await createTestDatabases();
  const mailFile = join(tmpdir(), `crm-mail-${process.pid}-${Date.now()}-${++counter}.log`);
  const config = loadConfig({ ...TEST_ENV, MAIL_OUTBOX_FILE: mailFile, ...env });
  let app: FastifyInstance;
  try {
    app = await buildApp(config, database, options);
  } catch (err) {
    await database.close();
    if (admin !== database) await admin.close();
    throw err;
  }
  checkEveryResponse(app);
  return {
    app,
    database,
    admin,
    config,
    close: async () => {
      try {
        await app.close();
      } finally {
        await database.close();
        if (admin !== database) await admin.close();
        rmSync(mailFile, { force: true });
      }
    },
  };
}

/**
 * Every response of `app.inject` (the promise form all tests use) is checked against the
 * served document (test/contract.ts); test/contract-setup.ts fails the file on a mismatch.
 */
function checkEveryResponse(app: FastifyInstance): void {
  useDocumentOf(app);
  const inject = app.inject.bind(app) as (opts?: unknown, cb?: unknown) => unknown;
  const wrapped = (
    opts?: string | { method?: string; url?: string | { pathname?: string }; path?: string },
    cb?: unknown,
  ) => {
    if (opts === undefined || cb !== undefined) return inject(opts, cb);
    const method = typeof opts === 'string' ? 'GET' : (opts.method ?? 'GET');
    const raw = typeof opts === 'string' ? opts : (opts.url ?? opts.path ?? '/');
    const url = typeof raw === 'string' ? raw : (raw.pathname ?? '/');
    return (inject(opts) as Promise<LightMyRequestResponse>).then((res) => {
      checkResponse(method, url, res);
      return res;
    });
  };
  app.inject = wrapped as FastifyInstance['inject'];
}

export interface CallOptions {
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** A signed-in user with an active organization, plus a typed shortcut for requests. */
export interface TestUser {
  userId: string;
  email: string;
  organizationId: string;
  cookie: string;
  call(method: string, url: string, body?: unknown, opts?: CallOptions): Promise<LightMyRequestResponse>;
}

export function cookieFrom(res: LightMyRequestResponse): string {
  const raw = res.headers['set-cookie'];
  const list = Array.isArray(raw) ? raw : raw ? [raw] : [];
  return list.map((c) => c.split(';')[0]).join('; ');
}

export async function signUp(
  app: FastifyInstance,
  name = 'Test User',
): Promise<{ userId: string; email: string; cookie: string }> {
  const email = `user${process.pid}-${Date.now()}-${++counter}@example.com`;
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/sign-up/email',
    payload: { name, email, password: 'correct horse battery' },
  });
  if (res.statusCode !== 200) throw new Error(`sign-up failed: ${res.statusCode} ${res.body}`);
  return { userId: res.json().data.user.id, email, cookie: cookieFrom(res) };
}

export function caller(app: FastifyInstance, headers: Record<string, string>) {
  return (method: string, url: string, body?: unknown, opts: CallOptions = {}) =>
    app.inject({
      method: method as 'GET',
      url,
      query: opts.query,
      headers: { ...headers, ...(opts.headers ?? {}) },
      ...(body === undefined ? {} : { payload: body as object }),
    });
}

/** Signs up a new user who creates (and activates) a new organization on `plan`. */
export async function newTenant(
  h: Pick<Harness, 'app' | 'database'>,
  opts: { plan?: Plan; timezone?: string; name?: string } = {},
): Promise<TestUser> {
  const user = await signUp(h.app);
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/organizations',
    headers: { cookie: user.cookie },
    payload: { name: opts.name ?? 'Acme Lawn', ...(opts.timezone ? { timezone: opts.timezone } : {}) },
  });
  if (res.statusCode !== 201) throw new Error(`create org failed: ${res.statusCode} ${res.body}`);
  const organizationId = res.json().data.id as string;
  if (opts.plan && opts.plan !== 'business') await setPlan(h, organizationId, opts.plan);
  return { ...user, organizationId, call: caller(h.app, { cookie: user.cookie }) };
}

/** Adds a signed-in member with `role` to the user's organization (through an invitation). */
export async function addMember(h: Pick<Harness, 'app'>, owner: TestUser, role: 'admin' | 'member'): Promise<TestUser> {
  const user = await signUp(h.app, `A ${role}`);
  const inv = await owner.call('POST', '/api/invitations', { email: user.email, role });
  if (inv.statusCode !== 201) throw new Error(`invite failed: ${inv.statusCode} ${inv.body}`);
  const acc = await h.app.inject({
    method: 'POST',
    url: `/api/invitations/${inv.json().data.id}/accept`,
    headers: { cookie: user.cookie },
  });
  if (acc.statusCode !== 200) throw new Error(`accept failed: ${acc.statusCode} ${acc.body}`);
  return { ...user, organizationId: owner.organizationId, call: caller(h.app, { cookie: user.cookie }) };
}

/** What `npm run admin -- set-plan` does, for tests. */
export async function setPlan(h: Pick<Harness, 'app' | 'database'>, organizationId: string, plan: Plan) {
  await asPlatform(h.database.db, async (tx) => {
    await tx.update(organizations).set({ plan }).where(eq(organizations.id, organizationId));
    await bumpAuthGenerationAsPlatform(tx);
  });
  h.app.deps.resolver.invalidate();
}

/** Creates an API key for the user's organization and returns a caller using it. */
export async function apiKeyCaller(h: Pick<Harness, 'app'>, owner: TestUser, role: 'admin' | 'member' = 'admin') {
  const res = await owner.call('POST', '/api/api-keys', { name: 'test key', role });
  if (res.statusCode !== 201) throw new Error(`api key failed: ${res.statusCode} ${res.body}`);
  const key = res.json().data.key as string;
  return { key, id: res.json().data.id as string, call: caller(h.app, { authorization: `Bearer ${key}` }) };
}
