import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
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
  idempotencyKeys: 'platform',
  authGeneration: 'platform',
  rateLimits: 'platform',
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
  properties: 'properties',
  services: 'services',
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
  mailJobs: 'mail',
  portalTokens: 'portal',
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
});
