import { getTableName, is, sql } from 'drizzle-orm';
import { getTableConfig, PgTable } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, rowsOf } from '../../src/db/client.js';
import * as schema from '../../src/db/schema/index.js';
import { createTestDatabases } from '../harness.js';
import { distributionFindings } from './distribution-rules.js';

/** Tables that break each rule once (and two that keep them all: good, child). */
const SCRATCH = `
  DROP SCHEMA IF EXISTS dk_scratch CASCADE;
  CREATE SCHEMA dk_scratch;
  CREATE TABLE dk_scratch.organizations (id text PRIMARY KEY);
  CREATE TABLE dk_scratch.good (organization_id text NOT NULL REFERENCES dk_scratch.organizations (id), id text NOT NULL,
    code text, PRIMARY KEY (organization_id, id), UNIQUE (organization_id, code));
  CREATE TABLE dk_scratch.child (organization_id text NOT NULL REFERENCES dk_scratch.organizations (id), id text NOT NULL,
    good_id text, PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, good_id) REFERENCES dk_scratch.good (organization_id, id));
  CREATE TABLE dk_scratch.nulling_fk (organization_id text NOT NULL, id text NOT NULL, good_id text, PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, good_id) REFERENCES dk_scratch.good (organization_id, id) ON DELETE SET NULL (good_id));
  CREATE TABLE dk_scratch.defaulting_fk (organization_id text NOT NULL, id text NOT NULL, good_id text, PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, good_id) REFERENCES dk_scratch.good (organization_id, id) ON UPDATE SET DEFAULT);
  -- (A primary key would make the column NOT NULL, so this one has none.)
  CREATE TABLE dk_scratch.nullable (organization_id text, id text NOT NULL);
  CREATE TABLE dk_scratch.keyed_by_id (organization_id text NOT NULL, id text PRIMARY KEY, code text UNIQUE);
  CREATE TABLE dk_scratch.no_key (organization_id text NOT NULL, id text);
  CREATE UNIQUE INDEX open_uq ON dk_scratch.no_key (id) WHERE organization_id <> '';
  CREATE TABLE dk_scratch.single_fk (organization_id text NOT NULL, id text NOT NULL, parent_id text REFERENCES dk_scratch.keyed_by_id (id),
    PRIMARY KEY (organization_id, id));
  CREATE TABLE dk_scratch.crossed_fk (organization_id text NOT NULL, other_org text NOT NULL, id text NOT NULL, good_id text,
    PRIMARY KEY (organization_id, id),
    FOREIGN KEY (other_org, good_id) REFERENCES dk_scratch.good (organization_id, id),
    FOREIGN KEY (other_org) REFERENCES dk_scratch.organizations (id));
  CREATE TABLE dk_scratch.counted (organization_id text NOT NULL, id serial, PRIMARY KEY (organization_id, id));
  CREATE TABLE dk_scratch.global_session (id text PRIMARY KEY, active_org text REFERENCES dk_scratch.organizations (id),
    good_org text, good_id text, FOREIGN KEY (good_org, good_id) REFERENCES dk_scratch.good (organization_id, id));
  CREATE TABLE dk_scratch.repeated_fk (organization_id text NOT NULL, id text NOT NULL, PRIMARY KEY (organization_id, id),
    FOREIGN KEY (organization_id, organization_id) REFERENCES dk_scratch.good (organization_id, id));
  CREATE FUNCTION dk_scratch.noop() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN RETURN NEW; END';
  CREATE TABLE dk_scratch.triggered (organization_id text NOT NULL REFERENCES dk_scratch.organizations (id), id text NOT NULL,
    PRIMARY KEY (organization_id, id));
  CREATE TRIGGER triggered_noop BEFORE INSERT ON dk_scratch.triggered FOR EACH ROW EXECUTE FUNCTION dk_scratch.noop();
`;

/**
 * The migrated schema is ready to be distributed by organization (operations.md §13): every
 * tenant table keyed by (organization_id, …), every unique including it, every foreign key
 * between tenant tables composite and never SET NULL / SET DEFAULT (Citus refuses both), no
 * global table pointing into the tenants, no 32-bit serial, no trigger (the rules: distribution-rules.ts).
 * Read from the catalog, on both databases.
 */
describe('distribution keys', () => {
  let database: Database;
  let admin: Database;
  beforeAll(async () => {
    ({ database, admin } = await createTestDatabases());
  });
  afterAll(async () => {
    if (admin !== database) await admin?.close();
    await database?.close();
  });

  it('the migrated schema breaks no rule', async () => {
    expect(await distributionFindings(admin)).toEqual([]);
  });

  it('each rule finds the table that breaks it (scratch tables)', async () => {
    // One statement at a time: PGlite prepares each query, and a prepared statement holds one command.
    for (const statement of SCRATCH.split(';\n')) if (statement.trim()) await admin.db.execute(sql.raw(statement));
    try {
      expect(await distributionFindings(admin, 'dk_scratch')).toEqual(
        [
          'counted.id: 32-bit serial',
          'crossed_fk: foreign key crossed_fk_other_org_fkey (other_org) to organizations is not (organization_id)',
          'crossed_fk: foreign key crossed_fk_other_org_good_id_fkey (other_org, good_id) to good does not carry organization_id',
          'defaulting_fk: foreign key defaulting_fk_organization_id_good_id_fkey (organization_id, good_id) to good is ON UPDATE SET DEFAULT (Citus refuses it)',
          'global_session: global table references root organizations (global_session_active_org_fkey)',
          'global_session: global table references tenant good (global_session_good_org_good_id_fkey)',
          'keyed_by_id: primary key (id) lacks organization_id',
          'keyed_by_id: unique index keyed_by_id_code_key lacks organization_id',
          'no_key: no primary key',
          'no_key: unique index open_uq lacks organization_id',
          'nullable: no primary key',
          'nullable: organization_id may be NULL',
          'nulling_fk: foreign key nulling_fk_organization_id_good_id_fkey (organization_id, good_id) to good is ON DELETE SET NULL (Citus refuses it)',
          'repeated_fk: foreign key repeated_fk_organization_id_organization_id_fkey names a column twice',
          'single_fk: foreign key single_fk_parent_id_fkey (parent_id) to keyed_by_id does not carry organization_id',
          'triggered: trigger triggered_noop (Citus runs it on the shard; no triggers)',
        ].sort(),
      );
    } finally {
      await admin.db.execute(sql.raw('DROP SCHEMA dk_scratch CASCADE'));
    }
  });

  /**
   * The Drizzle schema says what the database has: each table's primary key, its foreign
   * keys (columns, target, ON DELETE) and its unique constraints and indexes. Three foreign
   * keys live in SQL only, where a value import between schema files would be a cycle.
   */
  it('the Drizzle schema declares the same keys as the migrated database', async () => {
    const sqlOnly = new Set(['estimates_job_id_fk', 'jobs_crew_id_fk', 'job_schedules_crew_id_fk']);
    const action: Record<string, string> = { a: 'no action', r: 'restrict', c: 'cascade', n: 'set null' };
    const catalog = rowsOf<{
      table: string;
      kind: string;
      name: string;
      cols: string[];
      target: string | null;
      fcols: string[] | null;
      del: string | null;
    }>(
      await admin.db.execute(sql`
        SELECT c.relname AS table, con.contype::text AS kind, con.conname AS name,
          ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o) AS cols,
          f.relname AS target,
          ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o) AS fcols,
          con.confdeltype::text AS del
        FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid LEFT JOIN pg_class f ON f.oid = con.confrelid
        WHERE con.connamespace = 'public'::regnamespace AND con.contype IN ('p', 'f', 'u')
        UNION ALL
        SELECT c.relname, 'i', ic.relname,
          ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o),
          NULL, NULL, NULL
        FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_class ic ON ic.oid = i.indexrelid
        WHERE c.relnamespace = 'public'::regnamespace AND i.indisunique
          AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid)`),
    );
    const line = (table: string, kind: string, cols: string[], rest = '') =>
      `${table} ${kind} (${cols.join(', ')})${rest}`;
    const fromCatalog = catalog
      .filter((r) => !sqlOnly.has(r.name))
      .map((r) =>
        r.kind === 'f'
          ? line(
              r.table,
              'foreign key',
              r.cols,
              ` -> ${r.target} (${r.fcols?.join(', ')}) on delete ${action[r.del ?? 'a']}`,
            )
          : line(r.table, r.kind === 'p' ? 'primary key' : 'unique', r.cols),
      )
      .sort();
    const tables = (Object.values(schema) as unknown[]).filter((v): v is PgTable => is(v, PgTable));
    const fromDrizzle = tables
      .flatMap((table) => {
        const config = getTableConfig(table);
        const name = getTableName(table);
        const out: string[] = [];
        for (const c of config.columns) {
          if (c.primary) out.push(line(name, 'primary key', [c.name]));
          if (c.isUnique) out.push(line(name, 'unique', [c.name]));
        }
        for (const pk of config.primaryKeys)
          out.push(
            line(
              name,
              'primary key',
              pk.columns.map((c) => c.name),
            ),
          );
        for (const u of config.uniqueConstraints)
          out.push(
            line(
              name,
              'unique',
              u.columns.map((c) => c.name),
            ),
          );
        for (const i of config.indexes) {
          if (i.config.unique) {
            out.push(
              line(
                name,
                'unique',
                i.config.columns.map((c) => ('name' in c ? String(c.name) : '?')),
              ),
            );
          }
        }
        for (const fk of config.foreignKeys) {
          const ref = fk.reference();
          out.push(
            line(
              name,
              'foreign key',
              ref.columns.map((c) => c.name),
              ` -> ${getTableName(ref.foreignTable)} (${ref.foreignColumns.map((c) => c.name).join(', ')}) on delete ${fk.onDelete ?? 'no action'}`,
            ),
          );
        }
        return out;
      })
      .sort();
    expect(fromDrizzle).toEqual(fromCatalog);
  });
});
