import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTwilioStandIn, type TwilioStandIn } from '../messages/twilio-stand-in.js';
import { processEnvironment, startServer, stop } from './processes.js';

/**
 * Issue 17 item 5: the docs run. The README tour and the walkthroughs fence their runnable
 * shell as ```sh tour; each document's blocks run in order, in one bash (ids captured in one
 * block are used by the next), against a server on 127.0.0.1 whose address is BASE.
 * Every curl reports its status on stderr (a wrapper adds `--write-out`): no answer may be
 * 5xx, and the 4xx answers are exactly the lines the document marks "as expected".
 *
 * Each page runs once per database. A page is shown to stand alone (a fresh server of its own)
 * on PostgreSQL, and to run after every other page (one server, in a row) on PGlite: what a page
 * needs of the server before it does not depend on the database, so running both ways on
 * both databases would add time and no coverage, while every page still runs on both.
 */

/** `worker`: the page waits on background work (workflow runs, export archives), so its server runs the worker. */
const DOCS: { doc: string; worker?: boolean }[] = [
  { doc: 'README.md' },
  { doc: 'docs/customers.md' },
  { doc: 'docs/billing.md' },
  { doc: 'docs/jobs-contracts.md', worker: true },
  { doc: 'docs/purchasing.md' },
  { doc: 'docs/crew-equipment.md' },
  { doc: 'docs/winter-routes.md' },
  { doc: 'docs/workflows.md', worker: true },
  { doc: 'docs/dashboard-exports.md', worker: true },
  { doc: 'docs/accounting.md' },
  { doc: 'docs/requests.md' },
  { doc: 'docs/messages.md', worker: true },
];

const PRELUDE = `set -euo pipefail
curl() { command curl --max-time 30 --write-out '%{stderr}HTTP %{http_code} %{url_effective}\\n' "$@"; }
`;

function tourBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh tour\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Runs one document's `sh tour` blocks in `cwd` against `base` and checks every answer. */
function runTour(doc: string, base: string, cwd: string): void {
  const blocks = tourBlocks(readFileSync(doc, 'utf8'));
  expect(blocks.length, `${doc} has no \`\`\`sh tour block`).toBeGreaterThan(0);
  const script = blocks.join('\n');
  const result = spawnSync('bash', ['-c', PRELUDE + script], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, BASE: base, TZ: 'UTC' },
    encoding: 'utf8',
    timeout: 120_000,
    killSignal: 'SIGKILL',
  });
  const report = `${doc}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
  expect(result.status, report).toBe(0);
  const statuses = [...result.stderr.matchAll(/^HTTP (\d{3}) (\S+)$/gm)].map((m) => ({
    status: Number(m[1]),
    url: m[2] as string,
  }));
  expect(statuses.length, report).toBeGreaterThan(0);
  expect(
    statuses.filter((s) => s.status >= 500 || s.status === 0),
    report,
  ).toEqual([]);
  // Every request talked to the test server only.
  expect(
    statuses.filter((s) => !s.url.startsWith('http://127.0.0.1:')),
    report,
  ).toEqual([]);
  const expected4xx = script.split('\n').filter((line) => /as expected/.test(line)).length;
  expect(
    statuses.filter((s) => s.status >= 400),
    report,
  ).toHaveLength(expected4xx);
}

/**
 * Twilio for every docs server: the stand-in of Twilio's API on 127.0.0.1 (docs/messages.md texts
 * through it), taking whatever credentials a page configures.
 */
let twilio: TwilioStandIn | undefined;
beforeAll(async () => {
  twilio = await startTwilioStandIn();
  twilio.acceptAnyAccount = true;
});
afterAll(async () => twilio?.close());

/**
 * A server on a free port of 127.0.0.1 whose BASE_URL is its real address (portal links are built
 * from it, and Twilio's signatures are checked against it), texting through the Twilio stand-in.
 */
async function startDocsServer(label: string, worker: boolean) {
  const environment = await processEnvironment(label);
  const port = await freePort();
  if (!twilio) throw new Error('the Twilio stand-in did not start');
  const server = await startServer({
    ...environment.env,
    ...twilio.env,
    PORT: String(port),
    BASE_URL: `http://127.0.0.1:${port}`,
    RUN_WORKER: worker ? 'true' : 'false',
  });
  return { environment, server, cwd: mkdtempSync(join(environment.dir, 'shell-')) };
}

const onPostgres = inject('database').kind === 'postgres';

describe.runIf(onPostgres).each(DOCS)('$doc runs as written, on a server of its own', ({ doc, worker }) => {
  let started: Awaited<ReturnType<typeof startDocsServer>> | undefined;
  beforeAll(async () => {
    started = await startDocsServer('docs', worker ?? false);
  }, 180_000);
  afterAll(async () => {
    if (started) await stop(started.server.run);
    await started?.environment.cleanup();
  });

  it('every sh tour block exits 0, no 5xx, 4xx only where marked', () => {
    if (!started) throw new Error('no server');
    runTour(doc, started.server.base, started.cwd);
  }, 180_000);
});

/**
 * Issue 29: a new user pastes the README tour, then page after page, into one shell against one
 * `npm start`. No page may depend on a fresh server (its own sign-up emails, dates computed when
 * it runs), nor trip over the files an earlier page left in the directory.
 */
describe.skipIf(onPostgres)('every page in a row on one server, in one directory', () => {
  let started: Awaited<ReturnType<typeof startDocsServer>> | undefined;
  beforeAll(async () => {
    started = await startDocsServer('docs_all', true);
  }, 180_000);
  afterAll(async () => {
    if (started) await stop(started.server.run);
    await started?.environment.cleanup();
  });

  it.each(DOCS)(
    '$doc',
    ({ doc }) => {
      if (!started) throw new Error('no server');
      runTour(doc, started.server.base, started.cwd);
    },
    180_000,
  );

  it('the README tour again, after every page', () => {
    if (!started) throw new Error('no server');
    runTour('README.md', started.server.base, started.cwd);
  }, 180_000);
});
