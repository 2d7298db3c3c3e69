import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { type SQL, sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type Database, openDatabase, rowsOf } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { newId } from '../../src/platform/ids.js';
import { withDatabase, withUser } from '../global-setup.js';
import { distributionFindings } from './distribution-rules.js';

const info = inject('database');
const BEFORE = '0034_workflow_event_batches';
const ROWS_PER_ORGANIZATION = 2;

interface Column {
  table: string;
  name: string;
  type: string;
  notnull: boolean;
  hasdef: boolean;
}
interface ForeignKey {
  table: string;
  cols: string[];
  parent: string;
  pcols: string[];
}
type Row = Record<string, string | null>;

/**
 * Migration 0035 (every tenant table keyed by organization) on a database that holds rows,
 * as an older version left it: migrated through 0034, then every table given rows for two
 * organizations (two per organization in each tenant table, every foreign key column filled,
 * nullable ones included, a self-reference too), then 0035 applied. Every table's rows are
 * the same before and after (count and content), every composite foreign key has rows that
 * it now checks, the schema breaks no distribution rule, and a second migrate applies nothing.
 *
 * The rows are made from the catalog rather than through the API: the code of this version
 * names the new keys (ON CONFLICT targets), so it cannot write into the old schema.
 */
// Each test migrates a new database from nothing (34 migrations, twice on PGlite): a limit for a
// loaded machine, not a timing.
describe('migration 0035 on a database with rows', () => {
  const opened: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const close of opened) await close();
  });
  /** A new database migrated through 0034: `owner` migrates (as production), `admin` writes rows (no RLS). */
  async function olderDatabase(): Promise<{ owner: Database; admin: Database }> {
    let owner: Database;
    let admin: Database;
    if (info.kind === 'postgres') {
      const name = `${info.prefix}_keys_${newId('db').slice(3).toLowerCase()}`;
      const client = new pg.Client({ connectionString: info.url });
      await client.connect();
      await client.query(`CREATE DATABASE ${name} OWNER ${info.owner}`);
      await client.end();
      const url = withDatabase(info.url, name);
      owner = await openDatabase({ databaseUrl: withUser(url, info.owner), poolMax: 1 });
      admin = await openDatabase({ databaseUrl: url, poolMax: 2 });
      opened.push(async () => {
        await owner.close();
        await admin.close();
        const c = new pg.Client({ connectionString: info.url });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      });
    } else {
      owner = await openDatabase({ pglite: await PGlite.create({ extensions: { pg_trgm } }) });
      admin = owner;
      opened.push(() => owner.close());
    }
    const first = await migrate(owner, undefined, { through: BEFORE });
    expect(first.applied.at(-1)).toBe(BEFORE);
    return { owner, admin };
  }

  it('keeps every row and every reference, and a second run applies nothing', async () => {
    const { owner, admin } = await olderDatabase();
    await seed(admin);
    const before = await snapshot(admin);
    const beforeColumns = await columnsOf(admin);
    // Two organizations' rows in every tenant table, two rows in every other one.
    expect(Object.entries(before).filter(([t, s]) => s.n < (t === 'auth_generation' ? 1 : 2))).toEqual([]);

    // Readers beside the migration (another process's requests): they wait for its locks and
    // then read the same rows; none fails.
    let migrating = true;
    const reads: string[] = [];
    const reader = (async () => {
      while (migrating) {
        const got = await run<{ n: number }>(
          admin,
          sql`SELECT (SELECT count(*) FROM customers c JOIN properties p ON p.organization_id = c.organization_id
                        AND p.customer_id = c.id)::int
                   + (SELECT count(*) FROM webhook_deliveries d JOIN webhook_endpoints e ON e.organization_id = d.organization_id
                        AND e.id = d.endpoint_id)::int AS n`,
        ).then(
          (rows) => String(rows[0]?.n),
          (e: unknown) => `error: ${String(e)}`,
        );
        reads.push(got);
      }
    })();
    const report = await migrate(owner, undefined, { through: '0035_tenant_keys' }).finally(() => {
      migrating = false;
    });
    await reader;
    expect(reads.length).toBeGreaterThan(0);
    expect(new Set(reads)).toEqual(new Set([reads[0]]));
    expect(reads[0]).not.toMatch(/error/);
    expect(report.applied).toEqual(['0035_tenant_keys']);
    // Every table that was there keeps its rows.
    const after = await snapshot(admin, beforeColumns);
    expect(Object.fromEntries(Object.keys(before).map((t) => [t, after[t]]))).toEqual(before);
    // Then whatever later migrations ship (they may add columns and fill them; every row stays).
    await migrate(owner);
    const later = await snapshot(admin);
    expect(Object.fromEntries(Object.keys(before).map((t) => [t, later[t]?.n]))).toEqual(
      Object.fromEntries(Object.keys(before).map((t) => [t, before[t]?.n])),
    );
    // 0044: a customer with properties is found by their streets (the text ends with them).
    const unsearchable = await run<{ id: string }>(
      admin,
      sql`SELECT p.customer_id AS id FROM properties p JOIN customer_search cs
            ON cs.organization_id = p.organization_id AND cs.customer_id = p.customer_id
          WHERE position(lower(p.street) IN cs.property_text) = 0 OR right(cs.search_text, length(cs.property_text)) <> cs.property_text`,
    );
    expect(unsearchable).toEqual([]);
    expect(await distributionFindings(admin)).toEqual([]);
    // Every composite key between tenant tables checked rows that the migration kept.
    expect(await compositeKeysWithoutRows(admin, new Set(Object.keys(before)))).toEqual([]);
    // Tenant isolation as it was: forced on every tenant table but customer_search.
    const unforced = await run<{ t: string }>(
      admin,
      sql`SELECT relname AS t FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r'
            AND relrowsecurity AND NOT relforcerowsecurity ORDER BY 1`,
    );
    expect(unforced.map((r) => r.t)).toEqual(['customer_search']);

    expect(await migrate(owner)).toEqual({ applied: [], statements: [] });
  }, 300_000);

  it("refuses a database where a row points at another organization's row, and changes nothing", async () => {
    const { owner, admin } = await olderDatabase();
    await admin.db.execute(
      sql`INSERT INTO organizations (id, name, plan) VALUES ('org_a', 'A', 'pro'), ('org_b', 'B', 'pro')`,
    );
    await admin.db.execute(
      sql`INSERT INTO customers (id, organization_id, first_name) VALUES ('cus_a', 'org_a', 'Ann')`,
    );
    await admin.db.execute(
      sql`INSERT INTO properties (id, organization_id, customer_id, street) VALUES ('prp_b', 'org_b', 'cus_a', '1 Elm')`,
    );
    const failed = await migrate(owner).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(String(failed)).toMatch(/properties_customer_id_fk/);
    const pk = await run<{ def: string }>(
      admin,
      sql`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'customers_pkey'`,
    );
    expect(pk.map((r) => r.def)).toEqual(['PRIMARY KEY (id)']);
  }, 300_000);
});

const run = async <T>(database: Database, query: SQL) => rowsOf<T>(await database.db.execute(query));

/** Rows for every public table (two organizations' worth in each tenant table), parents first. */
async function seed(database: Database): Promise<void> {
  const columns = await run<Column>(
    database,
    sql`SELECT c.relname AS table, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
          a.attnotnull AS notnull, a.atthasdef AS hasdef
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY c.relname, a.attnum`,
  );
  const fks = await run<ForeignKey>(
    database,
    sql`SELECT c.relname AS table, p.relname AS parent,
          ARRAY(SELECT a.attname::text FROM unnest(f.conkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = f.conrelid AND a.attnum = k.n ORDER BY k.o) AS cols,
          ARRAY(SELECT a.attname::text FROM unnest(f.confkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = f.confrelid AND a.attnum = k.n ORDER BY k.o) AS pcols
        FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid JOIN pg_class p ON p.oid = f.confrelid
        WHERE f.contype = 'f' AND f.connamespace = 'public'::regnamespace`,
  );
  const tables = [...new Set(columns.map((c) => c.table))].filter((t) => t !== 'auth_generation');
  const isTenant = (t: string) => columns.some((c) => c.table === t && c.name === 'organization_id');
  // Parents first (a self-reference points at the row made just before).
  const order: string[] = [];
  const left = new Set(tables);
  while (left.size > 0) {
    const ready = [...left].filter((t) => fks.every((f) => f.table !== t || f.parent === t || !left.has(f.parent)));
    if (ready.length === 0) throw new Error(`foreign keys in a cycle: ${[...left].join(', ')}`);
    for (const t of ready.sort()) {
      order.push(t);
      left.delete(t);
    }
  }
  const made = new Map<string, Array<{ org: string | null; row: Row }>>();
  let serial = 0;
  const sampleOf = (c: Column, k: number): string => {
    if (c.type.endsWith('[]')) return '{}';
    if (c.type === 'text') return `s${++serial}_${c.name}`;
    if (c.type === 'boolean') return 'false';
    if (c.type === 'date') return `2026-01-0${k + 1}`;
    if (c.type.startsWith('timestamp')) return new Date(Date.UTC(2026, 0, 1 + k)).toISOString();
    if (c.type === 'json' || c.type === 'jsonb') return '{}';
    return String(k + 1); // integer, bigint, numeric, double precision, real
  };
  for (const table of order) {
    const orgs: Array<string | null> = isTenant(table)
      ? (made.get('organizations') ?? []).map((o) => o.row.id as string)
      : [null, null];
    const own = columns.filter((c) => c.table === table);
    const rows: Array<{ org: string | null; row: Row }> = [];
    for (const org of orgs) {
      for (let k = 0; k < (org === null ? 2 : ROWS_PER_ORGANIZATION); k++) {
        const row: Row = {};
        for (const c of own) if (c.notnull && !c.hasdef) row[c.name] = sampleOf(c, k);
        if (org !== null) row.organization_id = org;
        for (const f of fks.filter((x) => x.table === table && x.parent !== 'organizations')) {
          const candidates = f.parent === table ? rows.filter((r) => r.org === org) : (made.get(f.parent) ?? []);
          const sameOrg = isTenant(f.parent) ? candidates.filter((r) => r.org === org) : candidates;
          const parent = f.parent === table ? sameOrg.at(-1) : sameOrg[k % sameOrg.length];
          f.cols.forEach((col, i) => {
            if (col === 'organization_id') return;
            row[col] = parent ? (parent.row[f.pcols[i] as string] ?? null) : null;
          });
        }
        const names = Object.keys(row);
        const types = new Map(own.map((c) => [c.name, c.type]));
        await database.db.execute(
          sql`INSERT INTO ${sql.identifier(table)} (${sql.join(
            names.map((n) => sql.identifier(n)),
            sql`, `,
          )}) VALUES (${sql.join(
            names.map((n) => sql`${row[n]}::${sql.raw(types.get(n) as string)}`),
            sql`, `,
          )})`,
        );
        rows.push({ org, row });
      }
    }
    made.set(table, rows);
  }
}

/** Every table's columns (table → column names). */
async function columnsOf(database: Database): Promise<Map<string, string[]>> {
  const rows = await run<{ t: string; c: string }>(
    database,
    sql`SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public'`,
  );
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.t, [...(out.get(r.t) ?? []), r.c]);
  return out;
}

/**
 * Each table's row count and a digest of its rows as JSON, in a stable order; with `only`, just
 * those columns of each table (the columns a table had before later migrations added some).
 */
async function snapshot(
  database: Database,
  only?: Map<string, string[]>,
): Promise<Record<string, { n: number; digest: string }>> {
  const now = await columnsOf(database);
  const tables = await run<{ name: string }>(
    database,
    sql`SELECT relname AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' ORDER BY 1`,
  );
  const out: Record<string, { n: number; digest: string }> = {};
  for (const { name } of tables) {
    const kept = only?.get(name);
    const added = kept ? (now.get(name) ?? []).filter((c) => !kept.includes(c)) : [];
    const row = sql`(to_jsonb(t) - ${`{${added.join(',')}}`}::text[])::text`;
    const [r] = await run<{ n: number; digest: string }>(
      database,
      sql`SELECT count(*)::int AS n, md5(COALESCE(string_agg(${row}, E'\n' ORDER BY ${row}), '')) AS digest
          FROM ${sql.identifier(name)} t`,
    );
    out[name] = r as { n: number; digest: string };
  }
  return out;
}

/** Composite foreign keys between tenant tables that no row exercises (each should have some). */
async function compositeKeysWithoutRows(database: Database, tables: Set<string>): Promise<string[]> {
  const fks = await run<{ name: string; table: string; col: string }>(
    database,
    sql`SELECT f.conname AS name, c.relname AS table, a.attname AS col
        FROM pg_constraint f JOIN pg_class c ON c.oid = f.conrelid
        JOIN pg_attribute a ON a.attrelid = f.conrelid AND a.attnum = f.conkey[2]
        WHERE f.contype = 'f' AND f.connamespace = 'public'::regnamespace AND cardinality(f.conkey) = 2`,
  );
  const empty: string[] = [];
  for (const f of fks) {
    // Tables that later migrations make start empty here.
    if (!tables.has(f.table)) continue;
    const [r] = await run<{ n: number }>(
      database,
      sql`SELECT count(*)::int AS n FROM ${sql.identifier(f.table)} WHERE ${sql.identifier(f.col)} IS NOT NULL`,
    );
    if (!r || r.n === 0) empty.push(f.name);
  }
  return empty.sort();
}
