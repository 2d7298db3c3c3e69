/**
 * Prints every state machine's table into its doc page (between the
 * `<!-- state-table: <name> -->` and `<!-- /state-table -->` markers), so the docs say
 * what the code does. `npm run docs:states`; `--check` only reports stale pages.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { STATE_MACHINES } from '../src/modules/state-machines.js';
import { transitionTable } from '../src/platform/state-machine.js';

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The page with the block of `name` rewritten, or null when the page has no such block. */
export function withTable(page: string, name: string, table: string): string | null {
  const block = new RegExp(`(<!-- state-table: ${literal(name)} -->\\n)[\\s\\S]*?(<!-- /state-table -->)`);
  if (!block.test(page)) return null;
  return page.replace(block, (_all, open: string, close: string) => `${open}${table}\n${close}`);
}

export function staleTables(root: string): string[] {
  const problems: string[] = [];
  for (const { name, doc, machine } of STATE_MACHINES) {
    const page = readFileSync(new URL(doc, root), 'utf8');
    const next = withTable(page, name, transitionTable(machine));
    if (next === null) problems.push(`${doc} has no <!-- state-table: ${name} --> block`);
    else if (next !== page) problems.push(`${doc}: the ${name} table is stale (npm run docs:states)`);
  }
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = new URL('../', import.meta.url).href;
  if (process.argv.includes('--check')) {
    const problems = staleTables(root);
    for (const p of problems) console.error(p);
    process.exit(problems.length ? 1 : 0);
  }
  for (const { name, doc, machine } of STATE_MACHINES) {
    const url = new URL(doc, root);
    const page = readFileSync(url, 'utf8');
    const next = withTable(page, name, transitionTable(machine));
    if (next === null)
      throw new Error(`${doc} has no <!-- state-table: ${name} --> block: add one where the table belongs`);
    if (next !== page) writeFileSync(url, next);
  }
}
