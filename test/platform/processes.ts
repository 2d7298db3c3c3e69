import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { createFromTemplate, withDatabase } from '../global-setup.js';

/**
 * The real entry points as child processes, for the process tests (server, shutdown,
 * docs). On the embedded database in a temp dir by default; on a fresh PostgreSQL
 * database of its own when the suite runs on PostgreSQL.
 */

export interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Every child started here; `killAll` (afterAll) kills any still alive (a failed test). */
const children = new Set<ChildProcess>();

export function killAll(): void {
  for (const child of children) child.kill('SIGKILL');
}

/**
 * What `node` runs for `src/<entry>.ts`: the compiled `dist/<entry>.js`, as `npm start` runs
 * it, which test/global-setup.ts builds when a source changed (compiling the sources through
 * tsx at every start cost each process about 2 s of CPU more); the source through tsx for any
 * other script.
 */
export function entryArgs(script: string): string[] {
  const compiled = /^src\/([\w-]+)\.ts$/.exec(script);
  const dist = compiled ? `dist/${compiled[1]}.js` : undefined;
  return dist && existsSync(dist) ? [dist] : ['--import', 'tsx', script];
}

/**
 * The script as a node process of its own (directly, not through the tsx CLI, which relays a
 * signal and, when the child does not acknowledge it within 30 ms on a busy machine, kills
 * it), or `npm <args>` when `script` is `npm`.
 */
export function run(script: string, args: string[], env: Record<string, string>): Run {
  const [command, argv] = script === 'npm' ? ['npm', args] : [process.execPath, [...entryArgs(script), ...args]];
  const child = spawn(command, argv, {
    cwd: process.cwd(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += String(d);
  });
  child.stderr?.on('data', (d) => {
    out += String(d);
  });
  children.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, output: () => out, exited };
}

/** Resolves once `pattern` appears in the output (the test's timeout bounds the wait). */
export async function waitFor(r: Run, pattern: RegExp): Promise<RegExpExecArray> {
  for (;;) {
    const m = pattern.exec(r.output());
    if (m) return m;
    if (r.child.exitCode !== null) throw new Error(`exited before ${pattern}:\n${r.output()}`);
    await new Promise((res) => setTimeout(res, 25));
  }
}

export async function startServer(
  env: Record<string, string>,
  script = 'src/server.ts',
  args: string[] = [],
): Promise<{ run: Run; base: string }> {
  const r = run(script, args, env);
  // No deadline of its own: a first start runs initdb for the embedded database, which is slow on a
  // busy machine; the test's timeout bounds the wait.
  const m = await waitFor(r, /Server listening at (http:\/\/127\.0\.0\.1:\d+)/);
  // The port opens before the database is ready (it answers 503 meanwhile): wait for ready.
  await waitFor(r, /API ready on /);
  return { run: r, base: m[1] as string };
}

export async function stop(r: Run): Promise<number | null> {
  r.child.kill('SIGTERM');
  return r.exited;
}

/**
 * A temp dir and the environment of a server process using it: DATA_DIR in the dir, or a
 * PostgreSQL database of its own when the suite runs on PostgreSQL. The database starts
 * migrated, a copy of the run's template (test/global-setup.ts): a copied data directory
 * on PGlite, `CREATE DATABASE … TEMPLATE` on PostgreSQL, so a process starts in a moment
 * instead of running initdb and every migration. `empty: true` gives an empty one instead,
 * for the tests of a server migrating a database itself.
 */
export async function processEnvironment(
  label: string,
  { empty = false }: { empty?: boolean } = {},
): Promise<{ dir: string; env: Record<string, string>; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), `crm-${label}-`));
  const env: Record<string, string> = {
    NODE_ENV: 'development',
    PORT: '0',
    LOG_LEVEL: 'info',
    DATA_DIR: join(dir, 'data'),
    MAIL_OUTBOX_FILE: join(dir, 'outbox.log'),
    RUN_WORKER: 'true',
  };
  let dropDatabase: (() => Promise<void>) | undefined;
  const info = inject('database');
  if (info.kind === 'pglite' && !empty) cpSync(info.dataDir, env.DATA_DIR as string, { recursive: true });
  if (info.kind === 'postgres') {
    // A bare identifier whatever the label says (CREATE DATABASE takes no '-').
    const name = `${info.prefix}_${label.replace(/[^A-Za-z0-9_]/g, '_')}_${process.pid}_${++databases}`;
    const admin = new pg.Client({ connectionString: info.url });
    await admin.connect();
    if (empty) await admin.query(`CREATE DATABASE ${name}`);
    else await createFromTemplate(admin, name, info.template);
    await admin.end();
    env.DATABASE_URL = withDatabase(info.url, name);
    dropDatabase = async () => {
      const c = new pg.Client({ connectionString: info.url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    };
  }
  return {
    dir,
    env,
    cleanup: async () => {
      killAll();
      await dropDatabase?.();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Databases this test file has made, so that two environments of one label never share a name. */
let databases = 0;

/** Signs a new user up and creates an organization; returns the session cookie (it selects the organization). */
export async function signUpWithOrganization(
  base: string,
  name = 'Process Lawn',
): Promise<{ cookie: string; orgId: string; email: string }> {
  const json = { 'content-type': 'application/json' };
  const email = `p-${Date.now()}-${Math.random()}@example.com`;
  const up = await fetch(`${base}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ name: 'Owner', email, password: 'correct horse battery' }),
  });
  if (up.status !== 200) throw new Error(`sign-up: ${up.status} ${await up.text()}`);
  const cookie = up.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const org = await fetch(`${base}/api/organizations`, {
    method: 'POST',
    headers: { ...json, cookie },
    body: JSON.stringify({ name }),
  });
  if (org.status !== 201) throw new Error(`organization: ${org.status} ${await org.text()}`);
  return { cookie, orgId: (await org.json()).data.id as string, email };
}
