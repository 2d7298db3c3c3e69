import { sql } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/client.js';
import { asPlatform } from '../../platform/cross-tenant.js';

export const LOCATION_RETENTION_DAYS = 90;
const BATCH = 5_000;

/**
 * Cross-tenant lookup: retention is the same rule for every organization, so the
 * purge deletes old points across tenants in bounded batches (the BRIN index on
 * recorded_at finds them) instead of opening one transaction per organization.
 * The latest-point table is left alone: "where was this member last" stays known.
 */
export async function purgeOldLocations(database: Database, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - LOCATION_RETENTION_DAYS * 86_400_000);
  const result = await asPlatform(database.db, (tx) =>
    tx.execute(sql`
      DELETE FROM crew_locations WHERE ctid IN (
        SELECT ctid FROM crew_locations WHERE recorded_at < ${cutoff} LIMIT ${BATCH}
      ) RETURNING 1 AS gone`),
  );
  return rowsOf(result).length;
}

export const crewTrackingTasks: WorkerTask[] = [
  { name: 'crew-locations.purge', intervalMs: 3_600_000, run: (t) => purgeOldLocations(t.database) },
];
