import { expect, it } from 'vitest';
import { noteCitus, rowsAsArrays } from '../../src/db/values.js';

/*
 * The schedules suite again, with this process's rows sent as on Citus (src/db/values.ts: VALUES
 * lists, and the visits made, rewritten and canceled by the statements Citus routes to the
 * organization's shard: `makeVisitsRouted` and its siblings in schedules.visits.ts). On PGlite and
 * PostgreSQL, so the Citus form is held to every expectation of the one-statement form, which
 * schedules.test.ts checks; test/platform/citus.test.ts runs a schedule on the cluster itself.
 * noteCitus() runs before any test of the imported suite (its harness is built in beforeAll); the
 * file runs with the process files (vitest.config.ts), in a module graph of its own.
 */
noteCitus();

await import('./schedules.test.js');

// After the suite (its app has asked the database, which is not Citus): still the Citus form.
it('took the Citus form throughout', () => {
  expect(rowsAsArrays()).toBe(false);
});
