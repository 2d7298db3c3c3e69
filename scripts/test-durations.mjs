// The time each test file took, from the JSON reports vitest writes with
// `--reporter=json --outputFile.json=<file>` (one report per database):
//
//   node scripts/test-durations.mjs pglite=<report.json> [postgres=<report.json>] [--top N]
//
// prints a Markdown table, slowest file first (test/durations.md is one such table, committed).
// A file's time is from its start to its end, as the report gives them per file.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

const args = process.argv.slice(2);
const topAt = args.indexOf('--top');
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : Number.POSITIVE_INFINITY;
const runs = args.map((arg) => {
  const [label, file] = arg.includes('=') ? arg.split('=') : [arg, arg];
  return { label, report: JSON.parse(readFileSync(file, 'utf8')) };
});
if (runs.length === 0) {
  console.error('usage: node scripts/test-durations.mjs label=<vitest JSON report> ... [--top N]');
  process.exit(2);
}

const seconds = (ms) => (ms / 1000).toFixed(1);
const files = new Map();
for (const [i, { report }] of runs.entries()) {
  for (const r of report.testResults) {
    const name = relative(process.cwd(), r.name);
    const row = files.get(name) ?? { name, times: runs.map(() => undefined), tests: r.assertionResults.length };
    row.times[i] = r.endTime - r.startTime;
    files.set(name, row);
  }
}
const total = (row) => row.times.reduce((sum, t) => sum + (t ?? 0), 0);
const rows = [...files.values()].sort((a, b) => total(b) - total(a));
const wall = runs.map(({ report }) => {
  const ends = report.testResults.map((r) => r.endTime);
  return Math.max(...ends) - report.startTime;
});

console.log(`| File | Tests | ${runs.map((r) => `${r.label} (s)`).join(' | ')} |`);
console.log(`|---|---:|${runs.map(() => '---:').join('|')}|`);
for (const row of rows.slice(0, top)) {
  console.log(
    `| \`${row.name}\` | ${row.tests} | ${row.times.map((t) => (t === undefined ? '' : seconds(t))).join(' | ')} |`,
  );
}
console.log(`| whole run, wall clock | ${rows.reduce((n, r) => n + r.tests, 0)} | ${wall.map(seconds).join(' | ')} |`);
