import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processEnvironment, type Run, startServer, stop } from './processes.js';

/**
 * Issue 17 item 5: the docs run. The README tour and the walkthroughs fence their runnable
 * shell as ```sh tour; each document's blocks run in order, in one bash (ids captured in one
 * block are used by the next), against a fresh server on 127.0.0.1 whose address is BASE.
 * Every curl reports its status on stderr (a wrapper adds `--write-out`): no answer may be
 * 5xx, and the 4xx answers are exactly the lines the document marks "as expected".
 */

/** `worker`: the page waits on background work (workflow runs, export archives), so its server runs the worker. */
const DOCS: { doc: string; worker?: boolean }[] = [
  { doc: 'README.md' },
  { doc: 'docs/customers.md' },
  { doc: 'docs/billing.md' },
  { doc: 'docs/jobs-contracts.md' },
  { doc: 'docs/purchasing.md' },
  { doc: 'docs/crew-equipment.md' },
  { doc: 'docs/winter-routes.md' },
  { doc: 'docs/workflows.md', worker: true },
  { doc: 'docs/dashboard-exports.md', worker: true },
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

describe.each(DOCS)('$doc runs as written', ({ doc, worker }) => {
  let cleanup: (() => Promise<void>) | undefined;
  let server: { run: Run; base: string } | undefined;
  let cwd: string;

  beforeAll(async () => {
    const environment = await processEnvironment('docs');
    cleanup = environment.cleanup;
    const port = await freePort();
    // The portal links the server mails and returns are built from BASE_URL: the real address.
    server = await startServer({
      ...environment.env,
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      RUN_WORKER: worker ? 'true' : 'false',
    });
    cwd = mkdtempSync(join(environment.dir, 'shell-'));
  }, 180_000);
  afterAll(async () => {
    if (server) await stop(server.run);
    if (cwd) rmSync(cwd, { recursive: true, force: true });
    await cleanup?.();
  });

  it('every sh tour block exits 0, no 5xx, 4xx only where marked', () => {
    const blocks = tourBlocks(readFileSync(doc, 'utf8'));
    expect(blocks.length, `${doc} has no \`\`\`sh tour block`).toBeGreaterThan(0);
    const script = blocks.join('\n');
    const result = spawnSync('bash', ['-c', PRELUDE + script], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, BASE: server?.base ?? '', TZ: 'UTC' },
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
  }, 180_000);
});
