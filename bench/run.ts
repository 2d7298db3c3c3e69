import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchPart } from './lib.js';
import { benchParts } from './parts/index.js';

const PART_ENV = 'BENCH_PART';
const OUT_ENV = 'BENCH_PART_OUT';

/**
 * Each part runs in a process of its own (this script again, with the same loader flags), so
 * what one part leaves behind (a grown heap, open handles, warmed code) cannot speed up or slow
 * down the next one's service or baseline: a part measures the same alone or in the full run.
 */
function runInChild(name: string, out: string): string {
  // --expose-gc: parts that show memory as flat read the live heap after a full collection
  // (ledger-journal); without it their heap columns are n/a.
  const child = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', ...process.argv.slice(1, 2)], {
    stdio: 'inherit',
    env: { ...process.env, [PART_ENV]: name, [OUT_ENV]: out },
  });
  if (child.status !== 0) throw new Error(`bench part ${name} failed (exit ${child.status ?? child.signal})`);
  return readFileSync(out, 'utf8');
}

/**
 * `npm run bench`: every part measures the service against a baseline measured in
 * the same run on the same machine, and reports ratios, so the numbers mean
 * something on any hardware. Results: bench/results/latest.md.
 * `npm run bench -- customers` runs only the parts whose name contains "customers".
 */
async function main() {
  const only = process.env[PART_ENV];
  if (only) {
    // A child started below: run one part and hand its section back through a file.
    const part = benchParts.find((p) => p.name === only);
    if (!part) throw new Error(`no bench part ${only}`);
    writeFileSync(process.env[OUT_ENV] as string, await part.run());
    return;
  }
  const filter = process.argv[2];
  const parts: BenchPart[] = benchParts.filter((p) => !filter || p.name.includes(filter));
  const sections: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
  try {
    for (const part of parts) {
      console.log(`== ${part.name}`);
      const section = runInChild(part.name, join(dir, `${part.name}.md`));
      console.log(section);
      sections.push(section);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const header = [
    '# Benchmark results',
    '',
    `Run ${new Date().toISOString()} on Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}).`,
    'Each ratio compares the service with a baseline measured in the same run.',
    '',
  ].join('\n');
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/latest.md', `${header}\n${sections.join('\n\n')}\n`);
  console.log('written bench/results/latest.md');
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
