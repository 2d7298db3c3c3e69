import { describe, expect, it } from 'vitest';
import { runActionFor, runMachine, visitState } from '../../src/modules/winter-routes/winter-routes.states.js';
import { take } from '../../src/platform/state-machine.js';

describe('winter state machines', () => {
  it('keep a completed run completed when one of its visits is recorded again', () => {
    expect(take(runMachine, 'completed', runActionFor(0))).toBe('completed');
    expect(() => take(runMachine, 'completed', runActionFor(1))).toThrow(/Cannot start a winter run that is completed/);
  });
  it('derive the run move from pending visits and treat an invoiced visit as billed', () => {
    expect(runActionFor(0)).toBe('complete');
    expect(runActionFor(3)).toBe('start');
    expect(visitState({ status: 'serviced', invoiceId: 'inv_1' })).toBe('billed');
    expect(visitState({ status: 'skipped', invoiceId: null })).toBe('skipped');
  });
});
