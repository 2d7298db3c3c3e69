import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import { getTableName, is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import * as schema from '../../src/db/schema/index.js';

/*
 * A module's tables are written only by that module (src/modules/README.md). Every table of
 * the schema has one owner below; a file of src/modules/<m>/ that inserts into, updates or
 * deletes from a table whose owner is not <m> fails here, and so does a new table without an
 * owner. Another module's rows change through the owner's exported functions (its *.refs.ts
 * or service); an operation over several modules is a flow (src/flows/).
 *
 * Read from the source as text: `.insert(t)`, `.update(t)`, `.delete(t)` and raw
 * `INSERT INTO ${t}` / `UPDATE ${t}` / `DELETE FROM ${t}`, where `t` is the name a schema
 * table is exported under. A helper handed its table as a parameter (the shared document
 * plumbing in billing/, given invoices or estimates by their modules) is the owner's call.
 */

/** 'platform': written by src/platform (authentication, the outbox, idempotency); no module writes it. */
const OWNERS: Record<string, string> = {
  users: 'platform',
  sessions: 'platform',
  accounts: 'platform',
  verifications: 'platform',
  events: 'platform',
  eventBatches: 'platform',
  workflowEventBatches: 'platform',
  idempotencyKeys: 'platform',
  authGeneration: 'platform',
  rateLimits: 'platform',
  secretLookups: 'platform',
  organizations: 'organizations',
  members: 'members',
  invitations: 'invitations',
  apiKeys: 'api-keys',
  documentCounters: 'billing',
  invoices: 'invoices',
  invoiceLineItems: 'invoices',
  invoiceBillingKeys: 'invoices',
  estimates: 'estimates',
  estimateLineItems: 'estimates',
  payments: 'payments',
  paymentRefunds: 'payments',
  paymentIntents: 'payments',
  deposits: 'payments',
  depositPayments: 'payments',
  failedPayouts: 'payments',
  contractTemplates: 'contract-templates',
  contracts: 'contracts',
  contractActivity: 'contracts',
  crews: 'crew-tracking',
  timeEntries: 'crew-tracking',
  crewLocations: 'crew-tracking',
  crewLatestLocations: 'crew-tracking',
  deviceTokens: 'crew-tracking',
  customers: 'customers',
  customerSearch: 'customers',
  customerSmsConsents: 'customers',
  properties: 'properties',
  services: 'services',
  requests: 'requests',
  altchaSpent: 'requests',
  equipment: 'equipment',
  equipmentAssignments: 'equipment',
  maintenancePlans: 'equipment',
  maintenanceLogs: 'equipment',
  dataExports: 'exports',
  jobs: 'jobs',
  jobChecklistItems: 'jobs',
  jobActivity: 'jobs',
  jobSchedules: 'jobs',
  jobScheduleSkips: 'jobs',
  ledgerEntries: 'ledger',
  ledgerLines: 'ledger',
  ledgerCloses: 'ledger',
  ledgerAccountMappings: 'ledger',
  quickbooksConnections: 'quickbooks',
  quickbooksSyncJobs: 'quickbooks',
  quickbooksRecords: 'quickbooks',
  mailJobs: 'mail',
  messages: 'messages',
  messageStatusReports: 'messages',
  portalTokens: 'portal-links',
  vendors: 'vendors',
  purchaseOrders: 'purchase-orders',
  purchaseOrderLines: 'purchase-orders',
  bills: 'bills',
  billLines: 'bills',
  billPayments: 'bill-payments',
  billPaymentAllocations: 'bill-payments',
  webhookEndpoints: 'webhooks',
  webhookDeliveries: 'webhooks',
  webhookAttempts: 'webhooks',
  winterRoutes: 'winter-routes',
  winterRouteStops: 'winter-routes',
  storms: 'winter-routes',
  winterRuns: 'winter-routes',
  winterVisits: 'winter-routes',
  workflows: 'workflows',
  workflowRuns: 'workflows',
};

/*
 * Reads too go through the owner (its *.refs.ts or service): a file of src/modules/<m>/ that
 * imports another module's table object (a value import from src/db/schema; `import type`
 * is only a row type) fails, except the pairs below, each a single query that a function of
 * the owner could not give without a second round trip per row, or a read whose owner already
 * imports the reader (going through the owner would make the two modules import each other).
 * The platform's tables (sign-in, the outbox) are below every module and not listed here.
 */
const READS_ALLOWED: Record<string, string> = {
  'bill-payments/bill-payments.tasks.ts organizations':
    'the sweep finds, across tenants, every organization with due rows and its timezone in one join',
  'billing/billing.tasks.ts organizations':
    'the document sweeps find, across tenants, every organization with due rows and its timezone in one join',
  'customers/customers.refs.ts properties':
    'a property reference is checked with its customer (belongs to it, customer not deleted) in one query',
  'crew-tracking/crew-tracking.refs.ts jobs':
    "a time entry's job is checked where it is named; jobs import crew tracking (a job's crew), so the way round is a loop",
  'invoices/invoices.service.ts payments':
    'an invoice shows its payments; payments import invoices (they move them), so asking payments would be a loop',
  'invoices/invoices.pdf.ts payments': 'the PDF lists the payments, like the invoice view (same loop)',
  'jobs/jobs.portal.ts contracts':
    "a portal link's visits are found from its contract's customer; contracts import jobs (schedules), so the way round is a loop",
  'jobs/schedules/schedules.billing.ts contracts':
    "an installment plan splits its contract's totalValue; contracts import schedules, so asking contracts would be a loop",
  'jobs/schedules/schedules.billing.ts organizations':
    "the billing pass finds, across tenants, the installment plans due in each organization's timezone in one join",
  'jobs/schedules/schedules.service.ts contracts':
    'a schedule follows its contract (status, customer); contracts import schedules, so the way round is a loop',
  'payments/payments.tasks.ts invoices':
    'the sweep cancels open payment intents of closed invoices across tenants in one join',
};

/**
 * The reads above whose reason is a loop ("the owner imports the reader"): each is checked on
 * the module graph, so an entry whose owner stopped importing the reader fails here (the read
 * then goes through the owner's refs). The others are single statements that join the table,
 * which is checked on the reading file.
 */
const LOOP_READS = new Set([
  'crew-tracking/crew-tracking.refs.ts jobs',
  'invoices/invoices.service.ts payments',
  'invoices/invoices.pdf.ts payments',
  'jobs/jobs.portal.ts contracts',
  'jobs/schedules/schedules.billing.ts contracts',
  'jobs/schedules/schedules.service.ts contracts',
]);

const tableNames = Object.entries(schema)
  .filter(([, value]) => is(value, PgTable))
  .map(([name]) => name);

const WRITE =
  /\.(insert|update|delete)\(\s*([A-Za-z_$][\w$]*)\s*\)|(INSERT INTO|UPDATE|DELETE FROM)\s+\$\{\s*([A-Za-z_$][\w$]*)\s*\}/g;

/** The schema tables `source` writes, by their exported names. */
function tablesWritten(source: string): string[] {
  const found = new Set<string>();
  for (const m of source.matchAll(WRITE)) {
    const name = m[2] ?? m[4];
    if (name && name in OWNERS) found.add(name);
  }
  return [...found];
}

const SCHEMA_IMPORT = /import\s*(type\s+)?\{([^}]*)\}\s*from\s*'[./]*db\/schema\/[^']*'/g;

/** The schema tables `source` imports as values (`import type` and `type X` left out), by their exported names. */
function tablesImported(source: string): string[] {
  const found = new Set<string>();
  for (const m of source.matchAll(SCHEMA_IMPORT)) {
    if (m[1]) continue;
    for (const spec of (m[2] ?? '').split(',')) {
      const name = spec.trim().split(/\s+as\s+/)[0] ?? '';
      if (name in OWNERS) found.add(name);
    }
  }
  return [...found];
}

function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesOf(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const MODULES = join(import.meta.dirname, '../../src/modules');

describe('table ownership', () => {
  it('names an owner for every table of the schema, and only tables', () => {
    expect(tableNames.length).toBeGreaterThan(50);
    expect(tableNames.filter((name) => !(name in OWNERS))).toEqual([]);
    expect(Object.keys(OWNERS).filter((name) => !tableNames.includes(name))).toEqual([]);
    // Owners are modules that exist (or the platform).
    const modules = new Set(
      readdirSync(MODULES, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [e.name] : [])),
    );
    expect([...new Set(Object.values(OWNERS))].filter((o) => o !== 'platform' && !modules.has(o))).toEqual([]);
    expect(getTableName(schema.invoices)).toBe('invoices');
  });

  it('sees the writes it looks for', () => {
    const sample = [
      'await ctx.tx.update(invoices).set({ amountPaidCents: 1 });',
      'await tx.insert( members ).values(row);',
      'await ctx.tx.delete(purchaseOrders).where(x);',
      `await ctx.tx.execute(sql\`UPDATE $\{jobs} SET status = 1\`);`,
      'await ctx.tx.select().from(customers);',
      'await ctx.tx.update(table).set({});',
    ].join('\n');
    expect(tablesWritten(sample).sort()).toEqual(['invoices', 'jobs', 'members', 'purchaseOrders']);
  });

  it('finds no module writing a table of another module or of the platform', () => {
    const foreign: string[] = [];
    for (const file of filesOf(MODULES)) {
      const module = relative(MODULES, file).split(/[\\/]/)[0] as string;
      if (!module.includes('.')) {
        for (const table of tablesWritten(readFileSync(file, 'utf8'))) {
          if (OWNERS[table] !== module)
            foreign.push(`${relative(MODULES, file)} writes ${table} (owned by ${OWNERS[table]})`);
        }
      }
    }
    expect(foreign).toEqual([]);
  });

  it("finds the webhook engine writing only its delivery tables and the outbox's batches", () => {
    // src/delivery is the engine behind the webhooks module: it writes the module's delivery
    // state (deliveries, attempts, an endpoint's leases and failure count) in raw SQL, and it
    // takes the outbox's batches of events fanned out in the same statement that makes their
    // deliveries (one transaction: src/delivery/fanout.ts). Nothing else; a new write fails here.
    const ALLOWED = new Set([
      'INSERT INTO webhook_deliveries',
      'UPDATE webhook_deliveries',
      'INSERT INTO webhook_attempts',
      'UPDATE webhook_endpoints',
      'DELETE FROM event_batches',
      'UPDATE event_batches',
    ]);
    const RAW_WRITE = /\b(INSERT INTO|UPDATE|DELETE FROM)\s+([a-z_]+)(\s+SET\s+[a-z_]+)?/g;
    const writes = new Set<string>();
    const DELIVERY = join(import.meta.dirname, '../../src/delivery');
    for (const file of filesOf(DELIVERY)) {
      if (file.endsWith('.test.ts')) continue;
      const source = readFileSync(file, 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '');
      for (const m of source.matchAll(RAW_WRITE)) {
        const write = `${m[1]} ${m[2]}`;
        writes.add(m[2] === 'events' ? `${write}${(m[3] ?? '').replace(/\s+/g, ' ')}` : write);
      }
      // The query builder is not used for writes here; a write through it would need a rule too.
      expect(tablesWritten(source)).toEqual([]);
    }
    expect([...writes].filter((w) => !ALLOWED.has(w))).toEqual([]);
    expect([...ALLOWED].filter((w) => !writes.has(w))).toEqual([]);
  });

  it('sees the table imports it looks for', () => {
    const sample = [
      "import { jobs, purchaseOrders as po } from '../../db/schema/index.js';",
      "import type { invoices } from '../../db/schema/index.js';",
      "import { type estimates, members } from '../../db/schema/index.js';",
      "import { customers } from './customers.js';",
    ].join('\n');
    expect(tablesImported(sample).sort()).toEqual(['jobs', 'members', 'purchaseOrders']);
  });

  it("finds no module reading another module's table, but the named joins", () => {
    const foreign: string[] = [];
    const used = new Set<string>();
    for (const file of filesOf(MODULES)) {
      const path = relative(MODULES, file).split(/[\\/]/).join('/');
      const module = path.split('/')[0] as string;
      if (module.includes('.')) continue;
      for (const table of tablesImported(readFileSync(file, 'utf8'))) {
        const owner = OWNERS[table] as string;
        if (owner === module || owner === 'platform') continue;
        const key = `${path} ${table}`;
        if (key in READS_ALLOWED) used.add(key);
        else foreign.push(`${path} reads ${table} (owned by ${owner})`);
      }
    }
    expect(foreign).toEqual([]);
    // An allowance nothing needs any more goes.
    expect(Object.keys(READS_ALLOWED).filter((key) => !used.has(key))).toEqual([]);
  });

  it('keeps a read allowed only while its reason holds', async () => {
    expect([...LOOP_READS].filter((key) => !(key in READS_ALLOWED))).toEqual([]);
    const result = await cruise(['src'], {
      tsPreCompilationDeps: true,
      doNotFollow: { path: 'node_modules' },
      includeOnly: '^src/modules/',
    });
    const moduleOf = (path: string) => /^src\/modules\/([^/]+)\//.exec(path)?.[1];
    const imports = new Set<string>();
    for (const m of (result.output as ICruiseResult).modules) {
      for (const d of m.dependencies) imports.add(`${moduleOf(m.source)} ${moduleOf(d.resolved)}`);
    }
    const stale: string[] = [];
    for (const key of Object.keys(READS_ALLOWED)) {
      const [file, table] = key.split(' ') as [string, string];
      const reader = file.split('/')[0] as string;
      if (LOOP_READS.has(key)) {
        const owner = OWNERS[table] as string;
        if (!imports.has(`${owner} ${reader}`)) stale.push(`${key}: ${owner} does not import ${reader}`);
        continue;
      }
      // One statement joining the table: `.innerJoin(table` / `.leftJoin(table`, or `.from(table)` then a join.
      const source = readFileSync(join(MODULES, file), 'utf8');
      const joined = new RegExp(`[jJ]oin\\(\\s*${table}\\b|\\.from\\(\\s*${table}\\s*\\)\\s*\\.\\w*[jJ]oin\\(`);
      if (!joined.test(source)) stale.push(`${key}: no join of ${table}`);
    }
    expect(stale).toEqual([]);
  }, 120_000);
});
