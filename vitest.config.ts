import { defineConfig } from 'vitest/config';

/**
 * Two projects, run one after the other (sequence.groupOrder), so one run never asks the two
 * cores of a CI machine for more than they have: the in-process files (the app and the
 * database in the test's own process), then the files that start processes of their own (the
 * real server and worker, admin commands, PgBouncer, chromium for the console), two at a time
 * each. A process file spends most of its time waiting on its children (a server starting, a
 * drain, a browser page), so one at a time left a core idle.
 *
 * The in-process files share their worker's module graph (`isolate: false`): importing the app
 * again for each of some 150 files cost about 3 s of CPU each, more than most files' tests. Each
 * file still builds its own app on its own database (test/harness.ts); what a module keeps
 * between calls is keyed by the app's config or by ids no two files share. A file that mocks a
 * module or measures its heap needs a module graph of its own and runs with the process files.
 * test/durations.md lists what each file took. `.ci/run` runs the PGlite and the PostgreSQL pass
 * side by side: a PostgreSQL file waits on the server between statements, and the process files
 * on their children, and the other pass fills those waits.
 */
const PROCESS_TESTS = [
  'test/console/*.test.ts',
  'test/platform/docs-run.test.ts',
  'test/platform/migrate-beside-load.test.ts',
  'test/platform/multi-process.test.ts',
  'test/platform/outage-proxy.test.ts',
  'test/platform/pgbouncer.test.ts',
  'test/platform/server.test.ts',
  'test/platform/shutdown.test.ts',
  'test/platform/starting.test.ts',
  'test/webhooks/faults.test.ts',
  // Mocks a module (pdfkit): needs a module graph of its own.
  'test/mail/mail-worker.test.ts',
  // Sends rows as on Citus for good (noteCitus) and imports the schedules suite again: both need a
  // module graph of its own (shared, the suite's module is already loaded and the other files
  // would take the Citus form too).
  'test/jobs/schedules-values-path.test.ts',
  // Runs the app on a Citus coordinator, which notes Citus for good in its process (noteCitus): shared,
  // every later file of that worker would send its rows as VALUES lists, and src/db/values.test.ts,
  // which checks the arrays path, failed when it came after this file in the same worker.
  'test/platform/citus.test.ts',
  // Measures its heap with forced collections: a heap of its own, not one holding every module
  // and what earlier files left (collecting that made the file twice as slow).
  'test/exports/memory.test.ts',
];

const shared = {
  // Every response and webhook body the suite receives is checked against /openapi.json.
  setupFiles: ['./test/contract-setup.ts'],
  pool: 'forks' as const,
  testTimeout: 30_000,
  hookTimeout: 60_000,
  env: { NODE_ENV: 'test' },
};

export default defineConfig({
  test: {
    // Once per run, for both projects: the migrated template every file and process copies.
    globalSetup: ['./test/global-setup.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'in-process',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: PROCESS_TESTS,
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'processes',
          include: PROCESS_TESTS,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
