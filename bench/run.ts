import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { BenchPart } from './lib.js';
import { benchParts } from './parts/index.js';

/**
 * `npm run bench`: every part measures the service against a baseline measured in
 * the same run on the same machine, and reports ratios, so the numbers mean
 * something on any hardware. Results: bench/results/latest.md.
 * `npm run bench -- customers` runs only the parts whose name contains "customers".
 */
async function main() {
  const filter = process.argv[2];
  const parts: BenchPart[] = benchParts.filter((p) => !filter || p.name.includes(filter));
  const sections: string[] = [];
  for (const part of parts) {
    console.log(`== ${part.name}`);
    const section = await part.run();
    console.log(section);
    sections.push(section);
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
