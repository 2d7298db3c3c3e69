import { defineConfig } from 'vitest/config';

/**
 * Two projects, run one after the other (sequence.groupOrder), so the two cores of a CI
 * machine are never asked for more than they have: the in-process files (the app and the
 * database in the test's own process) two at a time, then the files that start processes
 * of their own (the real server and worker, admin commands, PgBouncer, chromium for the
 * console), one at a time, since each of those already keeps a core busy besides its test.
 * test/durations.md lists what each file took.
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
  // Mocks a module (pdfkit): needs a module graph of its own, which the in-process files share.
  'test/mail/mail-worker.test.ts',
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
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
