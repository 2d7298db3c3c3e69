import { describe, expect, it } from 'vitest';
import { finalStates, statesAccepting } from '../../platform/state-machine.js';
import { calendarRange, filterDate, resolveRange } from './jobs.dates.js';
import { JOB_STATUSES, JOB_TRIGGER_TO, jobMachine } from './jobs.states.js';

describe('job date bounds', () => {
  it('keeps a date and turns a date-time into its calendar date in the timezone', () => {
    expect(filterDate('startDate', '2026-03-02', 'Pacific/Auckland')).toBe('2026-03-02');
    expect(filterDate('startDate', '2026-03-02T03:00:00Z', 'America/Chicago')).toBe('2026-03-01');
    expect(filterDate('startDate', '2026-03-02T03:00:00Z', 'Pacific/Auckland')).toBe('2026-03-02');
    expect(filterDate('startDate', '2026-03-01T12:00:00Z', 'Pacific/Auckland')).toBe('2026-03-02');
    expect(filterDate('startDate', '2026-03-02T00:30:00-05:00', 'UTC')).toBe('2026-03-02');
    for (const bad of ['2026-02-30', 'tomorrow', '2026-3-1', '2026-03-02T25:00:00Z', '']) {
      expect(() => filterDate('startDate', bad, 'UTC'), bad).toThrow(/startDate/);
    }
  });

  it('resolves aliases with the canonical name winning and refuses an end before the start', () => {
    expect(resolveRange({ from: '2026-01-01', startDate: '2026-02-01', to: '2026-12-31' }, 'UTC')).toEqual({
      from: '2026-02-01',
      to: '2026-12-31',
    });
    expect(() => resolveRange({ from: '2026-02-02', to: '2026-02-01' }, 'UTC')).toThrow(/to: must not be before from/);
  });

  it('bounds the calendar to 92 days counting both ends, across a DST change', () => {
    expect(calendarRange('2026-01-01', '2026-04-02', 'America/New_York')).toEqual({
      from: '2026-01-01',
      to: '2026-04-02',
    });
    expect(() => calendarRange('2026-01-01', '2026-04-03', 'America/New_York')).toThrow(/92 days/);
    expect(() => calendarRange('2026-01-02', '2026-01-01', 'UTC')).toThrow(/before/);
  });
});

describe('job transition table', () => {
  it('keeps completed and canceled final and lets a draft leave only by publishing', () => {
    for (const s of JOB_STATUSES) expect(Object.values(jobMachine.table[s])).not.toContain('draft');
    expect(finalStates(jobMachine)).toEqual(['completed', 'canceled']);
    expect(jobMachine.table.draft).toEqual({ publish: 'scheduled' });
    expect(statesAccepting(jobMachine, 'publish')).toEqual(['draft']);
    expect(jobMachine.table.on_hold.complete).toBeUndefined();
    // Each PUT {status} trigger leads to the status that names it, wherever it is accepted.
    for (const [status, trigger] of Object.entries(JOB_TRIGGER_TO)) {
      for (const s of statesAccepting(jobMachine, trigger)) expect(jobMachine.table[s][trigger]).toBe(status);
    }
  });
});
