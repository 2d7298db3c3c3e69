// The compiled JavaScript that `npm start`, `npm run worker` and `npm run admin` run (issue 29
// item 3): loading TypeScript through tsx at every start cost seconds (about 12 on a loaded
// machine). `npm ci` builds dist/ once (the `prepare` script); scripts/run.mjs builds again
// only when a source changed since (or dist/ is missing), never at every start.
//
// Plain JavaScript on purpose: it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function walk(dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else out.push(path);
  }
  return out;
}

/** What dist/ was built from: every source file with its size and time (a change, an addition or a removal shows). */
function signature() {
  const files = [...walk(join(ROOT, 'src')), ...INPUTS.map((f) => join(ROOT, f)).filter((f) => existsSync(f))];
  return files
    .sort()
    .map((f) => {
      const s = statSync(f);
      return `${relative(ROOT, f)} ${s.size} ${Math.floor(s.mtimeMs)}`;
    })
    .join('\n');
}

export function isFresh() {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8') === signature();
}

/** The TypeScript compiler, or undefined where dev dependencies are not installed. */
function tscPath() {
  try {
    return createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

/**
 * Compiles src/ into a temporary folder beside dist/, copies the files that are not TypeScript
 * (the console's browser modules and stylesheet), then swaps it in: a process starting meanwhile
 * never sees half a dist/. Returns false when TypeScript is not installed.
 */
export function build(log = (line) => process.stderr.write(`${line}\n`)) {
  const tsc = tscPath();
  if (!tsc) return false;
  const before = signature();
  const tmp = join(ROOT, `.dist-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  log('compiling src/ to dist/ (after npm ci or a change to the sources; once, not at every start)…');
  const started = Date.now();
  const result = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', tmp], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`tsc -p tsconfig.build.json failed (exit ${result.status})`);
  }
  const src = join(ROOT, 'src');
  for (const file of walk(src)) {
    if (file.endsWith('.ts')) continue;
    const target = join(tmp, relative(src, file));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
  }
  embeddedTemplate(tmp, log);
  writeFileSync(join(tmp, '.build-stamp'), before);
  const old = join(ROOT, `.dist-old-${process.pid}`);
  if (existsSync(DIST)) renameSync(DIST, old);
  try {
    renameSync(tmp, DIST);
  } catch (err) {
    // Another process swapped its build in first: the same sources, so use that one.
    if (!existsSync(DIST)) throw err;
    rmSync(tmp, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
  log(`compiled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return true;
}

/** What the embedded template is made from: every migration and the code that applies them. */
function templateSignature(dist) {
  const hash = createHash('sha256');
  for (const file of [
    ...walk(join(ROOT, 'drizzle')).sort(),
    join(dist, 'db', 'migrate.js'),
    join(dist, 'db', 'client.js'),
  ]) {
    hash.update(`${relative(ROOT, file)}\n`);
    hash.update(readFileSync(file));
  }
  return hash.digest('hex');
}

/**
 * dist/pglite-template: an embedded data directory with every migration applied, which the first
 * `npm start` on an empty DATA_DIR copies instead of running initdb (about 5 s of CPU in
 * WebAssembly) and the migrations (about 2 s) itself (src/db/client.ts; the migrations then find it
 * current). Made once here, and carried over from the previous dist/ while the migrations and the
 * code applying them are unchanged. A failure only costs the first start its speed.
 */
function embeddedTemplate(dist, log) {
  const target = join(dist, 'pglite-template');
  const signature = templateSignature(dist);
  const previous = join(DIST, 'pglite-template');
  try {
    if (
      existsSync(join(previous, 'PG_VERSION')) &&
      readFileSync(join(previous, '.template-stamp'), 'utf8') === signature
    ) {
      cpSync(previous, target, { recursive: true });
      return;
    }
  } catch {
    // no usable previous template: make one
  }
  const started = Date.now();
  const made = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { openDatabase } = await import(${JSON.stringify(pathToFileURL(join(dist, 'db', 'client.js')).href)});
       const { migrate } = await import(${JSON.stringify(pathToFileURL(join(dist, 'db', 'migrate.js')).href)});
       const database = await openDatabase({ dataDir: ${JSON.stringify(target)} });
       await migrate(database);
       await database.close();`,
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (made.status !== 0 || !existsSync(join(target, 'PG_VERSION'))) {
    rmSync(target, { recursive: true, force: true });
    log('could not make the embedded database template: the first npm start migrates an empty database itself');
    return;
  }
  rmSync(join(target, '.lock.sock'), { force: true });
  writeFileSync(join(target, '.template-stamp'), signature);
  log(`embedded database template made in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// `node scripts/build.mjs` (the `prepare` script, run by npm ci): build unless already fresh.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (isFresh()) process.exit(0);
  if (!build()) {
    console.error(
      'typescript is not installed (npm ci --omit=dev?): npm start will run the TypeScript sources with tsx',
    );
  }
}
