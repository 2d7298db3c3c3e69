import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { staleTables } from '../../scripts/state-tables.js';
import { STATE_MACHINES } from '../../src/modules/state-machines.js';

const root = new URL('../../', import.meta.url).href;

describe('state machine tables', () => {
  it('are printed, current, in their doc pages (else run `npm run docs:states`)', () => {
    expect(staleTables(root)).toEqual([]);
  });

  it('cover every machine built with stateMachine() under src/modules', () => {
    const built = readdirSync(new URL('src/modules/', root), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts') && !f.endsWith('state-machines.ts'))
      .flatMap((f) => {
        const text = readFileSync(new URL(`src/modules/${f}`, root), 'utf8');
        return [...text.matchAll(/stateMachine<[^>]*>\(\s*'([^']+)'|stateMachine\(\s*'([^']+)'/g)].map(
          (m) => m[1] ?? m[2],
        );
      });
    const listed = new Set(STATE_MACHINES.map((e) => e.machine.resource));
    expect(built.filter((r) => !listed.has(r as string))).toEqual([]);
  });
});
