import { readFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { type Database, rowsOf } from '../../src/db/client.js';

/*
 * docs/scaling.md's ```sql citus block read as data, and the catalog it is checked against:
 * shared by test/platform/scaling-doc.test.ts (both databases) and test/platform/citus.test.ts
 * (a real Citus cluster).
 */

export interface CitusPlan {
  /** The whole block, statement by statement, as written (SET and DO included). */
  statements: string[];
  reference: string[];
  /** Table → [distribution column, colocate_with or undefined], in the block's order. */
  distributed: Map<string, { column: string; colocateWith: string | undefined }>;
  /** Every table the block names, in order. */
  order: string[];
}

export function citusPlan(markdown = readFileSync(new URL('../../docs/scaling.md', import.meta.url), 'utf8')) {
  const blocks = [...markdown.matchAll(/^```sql citus\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
  if (blocks.length !== 1) throw new Error(`docs/scaling.md must have one \`\`\`sql citus block, has ${blocks.length}`);
  const text = (blocks[0] as string).replace(/^\s*--.*$/gm, '');
  // Statements end with a semicolon at the end of a line; a DO $$ … $$ block ends at its own.
  const statements = (text.match(/\s*(?:DO \$\$[\s\S]*?\$\$;|[^;]+;)/g) ?? []).map((s) => s.trim()).filter(Boolean);
  const plan: CitusPlan = { statements, reference: [], distributed: new Map(), order: [] };
  for (const s of statements) {
    const ref = /^SELECT create_reference_table\('(\w+)'\);$/.exec(s);
    const dist = /^SELECT create_distributed_table\('(\w+)', '(\w+)'(?:, colocate_with => '(\w+)')?\);$/.exec(s);
    if (ref) plan.reference.push(ref[1] as string);
    else if (dist)
      plan.distributed.set(dist[1] as string, { column: dist[2] as string, colocateWith: dist[3] ?? undefined });
    else if (/create_(reference|distributed)_table/.test(s)) throw new Error(`unrecognized statement: ${s}`);
    if (ref || dist) plan.order.push((ref ?? dist)?.[1] as string);
  }
  return plan;
}

export interface Catalog {
  tables: string[];
  tenant: Set<string>;
  /** Table → the tables its foreign keys point at (itself excluded). */
  references: Map<string, Set<string>>;
}

export async function catalogOf(admin: Database): Promise<Catalog> {
  const tables = rowsOf<{ name: string; tenant: boolean }>(
    await admin.db.execute(sql`
      SELECT c.relname AS name,
        EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'organization_id'
                AND NOT a.attisdropped) AS tenant
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
      WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY 1`),
  );
  const fks = rowsOf<{ child: string; parent: string }>(
    await admin.db.execute(sql`
      SELECT r.relname AS child, p.relname AS parent
      FROM pg_constraint k
      JOIN pg_class r ON r.oid = k.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace AND n.nspname = 'public'
      JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND k.conrelid <> k.confrelid`),
  );
  const references = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set<string>()]));
  for (const fk of fks) references.get(fk.child)?.add(fk.parent);
  return {
    tables: tables.map((t) => t.name),
    tenant: new Set(tables.filter((t) => t.tenant || t.name === 'organizations').map((t) => t.name)),
    references,
  };
}
