import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { createTestDatabases } from '../harness.js';
import { type Catalog, catalogOf, citusPlan } from './citus-plan.js';

/**
 * docs/scaling.md's ```sql citus block (the statements that move the schema to Citus) against
 * the catalog of the migrated database, on PGlite and on PostgreSQL, so the document cannot
 * drift from the schema: every table named once and nothing else, tenant tables distributed by
 * organization_id with organizations, global tables as reference tables, and each table after
 * the tables it points at (Citus distributes a table only once what it references is).
 * test/platform/citus.test.ts runs the same block on a real cluster.
 */

describe('docs/scaling.md names every table for Citus', () => {
  let admin: Database;
  let database: Database;
  let catalog: Catalog;
  const plan = citusPlan();

  beforeAll(async () => {
    ({ admin, database } = await createTestDatabases());
    catalog = await catalogOf(admin);
  });
  afterAll(async () => {
    if (admin !== database) await admin.close();
    await database.close();
  });

  it('every table of the migrated schema once, and nothing else', () => {
    expect([...plan.order].sort()).toEqual([...catalog.tables].sort());
    expect(new Set(plan.order).size).toBe(plan.order.length);
  });

  it('tenant tables (those with an organization_id) distributed by it with organizations; global tables as reference tables', () => {
    expect(plan.distributed.get('organizations')).toEqual({ column: 'id', colocateWith: undefined });
    for (const [table, how] of plan.distributed) {
      if (table === 'organizations') continue;
      expect({ table, ...how }).toEqual({ table, column: 'organization_id', colocateWith: 'organizations' });
      expect(catalog.tenant.has(table), `${table} has no organization_id`).toBe(true);
    }
    for (const table of plan.reference) {
      expect(catalog.tenant.has(table), `${table} has an organization_id: distribute it`).toBe(false);
    }
  });

  it('no global table points at a tenant table, and each table comes after the tables it points at', () => {
    const reference = new Set(plan.reference);
    for (const table of reference) {
      const tenantParents = [...(catalog.references.get(table) ?? [])].filter((p) => !reference.has(p));
      expect(tenantParents, `${table} (global) points at tenant tables`).toEqual([]);
    }
    const seen = new Set<string>();
    for (const table of plan.order) {
      const missing = [...(catalog.references.get(table) ?? [])].filter((p) => !seen.has(p));
      expect(missing, `${table} is distributed before the tables it points at`).toEqual([]);
      seen.add(table);
    }
  });
});
