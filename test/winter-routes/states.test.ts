import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  runActionFor,
  runMachine,
  visitMachine,
  visitState,
} from '../../src/modules/winter-routes/winter-routes.states.js';
import { transitionTable } from '../../src/platform/state-machine.js';

describe('winter state machines', () => {
  it('are the tables printed in docs/winter-routes.md', () => {
    const doc = readFileSync(new URL('../../docs/winter-routes.md', import.meta.url), 'utf8');
    expect(doc).toContain(transitionTable(runMachine));
    expect(doc).toContain(transitionTable(visitMachine));
  });
  it('derive the run move from pending visits and treat an invoiced visit as billed', () => {
    expect(runActionFor(0)).toBe('complete');
    expect(runActionFor(3)).toBe('start');
    expect(visitState({ status: 'serviced', invoiceId: 'inv_1' })).toBe('billed');
    expect(visitState({ status: 'skipped', invoiceId: null })).toBe('skipped');
  });
});
