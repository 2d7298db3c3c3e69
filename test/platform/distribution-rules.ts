import { sql } from 'drizzle-orm';
import { type Database, rowsOf } from '../../src/db/client.js';

/**
 * The rules that keep the schema ready to be distributed by organization (operations.md §13,
 * src/db/README.md), read from the catalog of a migrated database. A tenant table is a table
 * with an `organization_id` column; `organizations` is the tenant root, keyed by `id`; every
 * other table is global. Each broken rule is one readable line; a schema that keeps them all
 * gives `[]`.
 *
 * `schema` is `public` for the application; the test also runs the rules on a scratch schema
 * built to break each one, so a rule that can no longer fail is noticed.
 */
export async function distributionFindings(database: Database, schema = 'public'): Promise<string[]> {
  const run = async <T>(text: string) =>
    rowsOf<T>(await database.db.execute(sql.raw(text.replaceAll(':schema', `'${schema.replaceAll("'", "''")}'`))));
  const rows = await run<{ finding: string }>(`
    WITH rel AS (
      SELECT c.oid, c.relname,
        (SELECT a.attnum FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id' AND NOT a.attisdropped) AS org,
        (SELECT a.attnum FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'id' AND NOT a.attisdropped) AS id
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = :schema AND c.relkind IN ('r', 'p')
    ), t AS (
      SELECT rel.*, CASE WHEN relname = 'organizations' THEN 'root' WHEN org IS NOT NULL THEN 'tenant' ELSE 'global' END AS kind
      FROM rel
    ), cols AS (
      SELECT t.oid, string_agg(a.attname, ', ' ORDER BY k.n) AS list, k.conid
      FROM t
      JOIN (SELECT con.oid AS conid, con.conrelid, u.attnum, u.n FROM pg_constraint con, unnest(con.conkey) WITH ORDINALITY u(attnum, n)) k
        ON k.conrelid = t.oid
      JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
      GROUP BY t.oid, k.conid
    )
    -- The organization may not be missing from a row.
    SELECT format('%s: organization_id may be NULL', t.relname) AS finding
    FROM t JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = t.org
    WHERE t.kind = 'tenant' AND NOT a.attnotnull
    UNION ALL
    -- A primary key, with the organization in it (the root: its id).
    SELECT format('%s: no primary key', t.relname)
    FROM t WHERE t.kind <> 'global' AND NOT EXISTS (SELECT 1 FROM pg_constraint p WHERE p.conrelid = t.oid AND p.contype = 'p')
    UNION ALL
    SELECT format('%s: primary key (%s) lacks organization_id', t.relname, cols.list)
    FROM t JOIN pg_constraint p ON p.conrelid = t.oid AND p.contype = 'p' JOIN cols ON cols.conid = p.oid
    WHERE t.kind = 'tenant' AND NOT t.org = ANY(p.conkey)
    UNION ALL
    SELECT format('%s: primary key (%s) is not (id)', t.relname, cols.list)
    FROM t JOIN pg_constraint p ON p.conrelid = t.oid AND p.contype = 'p' JOIN cols ON cols.conid = p.oid
    WHERE t.kind = 'root' AND p.conkey <> ARRAY[t.id]
    UNION ALL
    -- Every unique constraint and unique index (partial ones included) names the organization.
    SELECT format('%s: unique index %s lacks organization_id', t.relname, ic.relname)
    FROM t JOIN pg_index i ON i.indrelid = t.oid JOIN pg_class ic ON ic.oid = i.indexrelid
    WHERE t.kind = 'tenant' AND i.indisunique AND NOT i.indisprimary AND NOT t.org = ANY(i.indkey::int2[])
    UNION ALL
    -- Foreign keys between tenant tables carry the organization on both sides, at the same place.
    SELECT format('%s: foreign key %s (%s) to %s does not carry organization_id', t.relname, f.conname, cols.list, p.relname)
    FROM t JOIN pg_constraint f ON f.conrelid = t.oid AND f.contype = 'f' JOIN t p ON p.oid = f.confrelid
    JOIN cols ON cols.conid = f.oid
    WHERE t.kind = 'tenant' AND p.kind = 'tenant'
      AND NOT EXISTS (SELECT 1 FROM generate_subscripts(f.conkey, 1) s(k) WHERE f.conkey[s.k] = t.org AND f.confkey[s.k] = p.org)
    UNION ALL
    SELECT format('%s: foreign key %s names a column twice', t.relname, f.conname)
    FROM t JOIN pg_constraint f ON f.conrelid = t.oid AND f.contype = 'f'
    WHERE cardinality(f.conkey) <> (SELECT count(DISTINCT k) FROM unnest(f.conkey) k)
    UNION ALL
    -- A tenant table points at its organization by organization_id alone (co-located).
    SELECT format('%s: foreign key %s (%s) to organizations is not (organization_id)', t.relname, f.conname, cols.list)
    FROM t JOIN pg_constraint f ON f.conrelid = t.oid AND f.contype = 'f' JOIN t p ON p.oid = f.confrelid
    JOIN cols ON cols.conid = f.oid
    WHERE t.kind = 'tenant' AND p.kind = 'root' AND (f.conkey <> ARRAY[t.org] OR f.confkey <> ARRAY[p.id])
    UNION ALL
    -- Citus refuses SET NULL / SET DEFAULT on a foreign key that carries the distribution column
    -- (even SET NULL (x_id), which leaves the organization alone): NO ACTION, and the deleting
    -- service clears the references (drizzle/0038, src/flows/delete-referenced.ts).
    SELECT format('%s: foreign key %s (%s) to %s is ON %s SET %s (Citus refuses it)', t.relname, f.conname, cols.list,
      p.relname, CASE WHEN f.confdeltype IN ('n', 'd') THEN 'DELETE' ELSE 'UPDATE' END,
      CASE WHEN 'n' IN (f.confdeltype, f.confupdtype) THEN 'NULL' ELSE 'DEFAULT' END)
    FROM t JOIN pg_constraint f ON f.conrelid = t.oid AND f.contype = 'f' JOIN t p ON p.oid = f.confrelid
    JOIN cols ON cols.conid = f.oid
    WHERE t.kind = 'tenant' AND p.kind <> 'global' AND (f.confdeltype IN ('n', 'd') OR f.confupdtype IN ('n', 'd'))
    UNION ALL
    -- Global tables (reference or local tables once distributed) never point into the tenants.
    SELECT format('%s: global table references %s %s (%s)', t.relname, p.kind, p.relname, f.conname)
    FROM t JOIN pg_constraint f ON f.conrelid = t.oid AND f.contype = 'f' JOIN t p ON p.oid = f.confrelid
    WHERE t.kind = 'global' AND p.kind <> 'global'
    UNION ALL
    -- No triggers, on any table: on Citus a trigger runs on the node holding the shard, where a
    -- statement on another table is a distributed query from a query on a shard (refused), and a
    -- pg_notify is not heard by the coordinator's listeners (drizzle/0042, 0047; docs/scaling.md).
    SELECT format('%s: trigger %s (Citus runs it on the shard; no triggers)', t.relname, tg.tgname)
    FROM t JOIN pg_trigger tg ON tg.tgrelid = t.oid
    WHERE NOT tg.tgisinternal
    UNION ALL
    -- No 32-bit counters on tenant tables (serial, int identity): ids are text, counters bigint.
    SELECT format('%s.%s: 32-bit serial', t.relname, a.attname)
    FROM t JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum > 0 AND NOT a.attisdropped
    LEFT JOIN pg_attrdef d ON d.adrelid = t.oid AND d.adnum = a.attnum
    WHERE t.kind <> 'global' AND a.atttypid IN ('int2'::regtype, 'int4'::regtype)
      AND (a.attidentity <> '' OR pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%')
    ORDER BY 1`);
  return rows.map((r) => r.finding);
}
