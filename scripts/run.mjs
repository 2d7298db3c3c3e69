// `npm start` / `npm run worker` / `npm run admin`: node scripts/run.mjs <server|worker|admin> [args…]
// Runs the compiled dist/<entry>.js, compiling first only when dist/ is missing or older than the
// sources (scripts/build.mjs). Without TypeScript installed (npm ci --omit=dev), the sources run
// through tsx instead. The entry runs in this very process (no child): signals reach it directly.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, DIST, isFresh, ROOT } from './build.mjs';

const ENTRIES = ['server', 'worker', 'admin'];
const entry = process.argv[2] ?? '';
if (!ENTRIES.includes(entry)) {
  console.error(`usage: node scripts/run.mjs <${ENTRIES.join('|')}> [arguments]`);
  process.exit(2);
}
// The entry reads its own arguments from process.argv.slice(2), as when started directly.
process.argv.splice(2, 1);

if (isFresh() || build()) {
  await import(pathToFileURL(join(DIST, `${entry}.js`)).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(join(ROOT, 'src', `${entry}.ts`)).href);
}
