import type { Config } from '../../config.js';
import type { Database } from '../../db/client.js';
import { createLimiters, type Limiters } from '../../platform/rate-limit.js';
import { SecretBox } from '../../platform/secrets.js';
import { INTUIT_LIMITS, type RealmLimits, RealmPace } from './quickbooks.pacing.js';

/** What a sync pass needs besides the database: the configuration, the token box and the realm's pace. */
export interface SyncDeps {
  config: Config;
  box: SecretBox;
  pace: RealmPace;
}

/**
 * Deps with a pace of their own over a budget shared through Redis or `database`'s platform
 * connection: the process's (syncDeps), or another worker's in tests and the bench. `close`
 * lets go of the Redis connection, if any.
 */
export function makeSyncDeps(
  config: Config,
  database: Database,
  limits: RealmLimits = INTUIT_LIMITS,
): SyncDeps & { close(): Promise<void> } {
  const limiters: Limiters = createLimiters(config, undefined, database.platformDb);
  const budget = limiters.sharedBucket(
    `quickbooks:${limits.perWindow}/${limits.windowSec}`,
    limits.perWindow,
    limits.windowSec,
  );
  return {
    config,
    box: new SecretBox(config.authSecret),
    pace: new RealmPace(limits, budget),
    close: () => limiters.close(),
  };
}

let shared: (SyncDeps & { close(): Promise<void>; database: Database }) | undefined;

/** The process's deps, made once: every pass of the process shares them. */
export function syncDeps(config: Config, database: Database): SyncDeps {
  if (!shared || shared.config !== config || shared.database !== database)
    shared = { ...makeSyncDeps(config, database), database };
  return shared;
}

/** Lets go of the process's deps (the worker stopping). */
export async function closeSyncDeps(): Promise<void> {
  const deps = shared;
  shared = undefined;
  await deps?.close();
}
