import type { WorkerTask } from '../../background/runner.js';
import { feedJobs, syncDeps, syncJobs } from './quickbooks.sync.js';

/**
 * The QuickBooks sync's two passes (quickbooks.sync.ts): the feed turns committed changes into
 * jobs, the sync writes them. Both are safe in several worker processes at once.
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
    run: ({ database, config }) => syncJobs(database, syncDeps(config)),
  },
];
