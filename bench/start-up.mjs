// Start-up time of `npm start` on the embedded database, timed from outside as one whole command:
//   node bench/start-up.mjs warm    # DATA_DIR kept between runs (a directory under the temp dir): open + check
//   node bench/start-up.mjs fresh   # an empty DATA_DIR each run: every migration applied
// It starts `npm start` (the compiled dist/, as a user would), polls GET /readyz on 127.0.0.1 every
// 20 ms (each probe on its own connection, closed after the answer), and exits 0 once it answers
// 200, after stopping the server (SIGTERM, then waiting for it to exit so the next run finds the
// data directory free). Time it with any whole-process timer, e.g.
//   /usr/bin/time -f %e node bench/start-up.mjs warm   (run it once first to create the directory)
// It prints the server's own "ready in N ms" figure. Run `npm run build` first after a change.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const mode = process.argv[2];
if (mode !== 'warm' && mode !== 'fresh') {
  console.error('usage: node bench/start-up.mjs <warm|fresh>');
  process.exit(2);
}
const dataDir = mode === 'warm' ? join(tmpdir(), 'crm-start-up-warm') : mkdtempSync(join(tmpdir(), 'crm-start-'));

const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});

const started = performance.now();
const server = spawn('npm', ['start'], {
  cwd: ROOT,
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let readyLine = '';
server.stdout.setEncoding('utf8');
server.stdout.on('data', (chunk) => {
  const match = /API ready on [^"]* in (\d+) ms/.exec(chunk);
  if (match) readyLine = match[1];
});
const exited = new Promise((resolve) => server.once('exit', resolve));

/**
 * One probe on a connection of its own that the server closes after answering (`agent: false`
 * sends `Connection: close`), as a load balancer's health check does. A kept-alive probe
 * connection (fetch's default) stayed open and idle in this process, and the server's clean stop
 * then waited out its drain's grace for idle connections (src/platform/drain.ts: 0.3 s quiet, then
 * 1 s) for a client that would never send again: 1.3 s of every run that was the probe, not the
 * server.
 */
const probe = () =>
  new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: '/readyz', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0)); // not listening yet
  });

let ready = false;
const deadline = started + 60_000;
while (!ready && performance.now() < deadline) {
  ready = (await probe()) === 200;
  if (!ready) await new Promise((r) => setTimeout(r, 20));
}
const readyMs = Math.round(performance.now() - started);
server.kill('SIGTERM');
await exited;
if (mode === 'fresh') rmSync(dataDir, { recursive: true, force: true });
console.log(
  ready
    ? `${mode}: /readyz 200 after ${readyMs} ms (the server's own figure: ${readyLine || '?'} ms)`
    : `${mode}: not ready in 60 s`,
);
process.exit(ready ? 0 : 1);
