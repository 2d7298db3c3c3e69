import { describe, expect, it } from 'vitest';
import { splitByDay } from './timesheets.split.js';

const H = 3_600_000;

describe('splitByDay', () => {
  it('splits an entry at local midnight', () => {
    // 22:00 → 02:00 in Chicago (CST, UTC−6) on an ordinary night.
    const parts = splitByDay(new Date('2026-01-10T04:00:00Z'), new Date('2026-01-10T08:00:00Z'), 'America/Chicago');
    expect(parts).toEqual([
      { date: '2026-01-09', ms: 2 * H },
      { date: '2026-01-10', ms: 2 * H },
    ]);
  });

  it('counts real hours across the spring-forward night (a 23-hour day)', () => {
    // 2026-03-07 22:00 CST → 2026-03-08 04:00 CDT: 2 h on the 7th, 3 h on the 8th (02:00 to 03:00 never happens).
    const parts = splitByDay(new Date('2026-03-08T04:00:00Z'), new Date('2026-03-08T09:00:00Z'), 'America/Chicago');
    expect(parts).toEqual([
      { date: '2026-03-07', ms: 2 * H },
      { date: '2026-03-08', ms: 3 * H },
    ]);
    const wholeDay = splitByDay(new Date('2026-03-08T06:00:00Z'), new Date('2026-03-09T05:00:00Z'), 'America/Chicago');
    expect(wholeDay).toEqual([{ date: '2026-03-08', ms: 23 * H }]);
  });

  it('counts 25 hours on the fall-back day', () => {
    const day = splitByDay(new Date('2026-11-01T05:00:00Z'), new Date('2026-11-02T06:00:00Z'), 'America/Chicago');
    expect(day).toEqual([{ date: '2026-11-01', ms: 25 * H }]);
  });
});
