import type { Database } from './client.js';

/**
 * Whether the database is a Citus coordinator (the `citus` extension installed:
 * docs/scaling.md). Work that locks rows across organizations in one statement runs per
 * organization there, since Citus locks rows only within one shard (the webhook worker:
 * src/delivery/); on PostgreSQL and PGlite it keeps its one statement across organizations.
 */
export async function isCitus(database: Pick<Database, 'platformQuery'>): Promise<boolean> {
  const [row] = await database.platformQuery(
    { text: "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'citus')" },
    [],
  );
  return row?.[0] === true;
}
