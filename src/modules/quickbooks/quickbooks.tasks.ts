import type { WorkerTask } from '../../background/runner.js';
import { closeSyncDeps, syncDeps } from './quickbooks.deps.js';
import { feedJobs } from './quickbooks.feed.js';
import { syncJobs } from './quickbooks.sync.js';

/**
 * The QuickBooks sync's two passes: the feed (quickbooks.feed.ts) turns committed changes into
 * jobs, the sync (quickbooks.sync.ts) writes them. Both are safe in several worker processes at once.
 */
export const quickbooksTasks: WorkerTask[] = [
  {
    name: 'quickbooks.feed',
    intervalMs: 2_000,
    run: async ({ database, wake }) => {
      const read = await feedJobs(database);
      if (read > 0) wake();
      return read;
    },
  },
  {
    name: 'quickbooks.sync',
    intervalMs: 1_000,
    run: ({ database, config }) => syncJobs(database, syncDeps(config, database)),
    // The shared budget may hold a Redis connection: let it go when the worker stops.
    start: async () => closeSyncDeps,
  },
];
