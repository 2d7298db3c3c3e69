import { describe, expect, it } from 'vitest';
import { canTake, finalStates, stateMachine, take, transitionTable } from './state-machine.js';

const door = stateMachine('door', ['open', 'closed', 'locked', 'gone'] as const, {
  close: { from: ['open'], to: 'closed' },
  open: { from: ['closed'], to: 'open' },
  lock: { from: ['closed'], to: 'locked' },
  remove: { from: ['open', 'closed'], to: 'gone' },
});

describe('stateMachine', () => {
  it('allows only the moves in the table', () => {
    expect(take(door, 'open', 'close')).toBe('closed');
    expect(canTake(door, 'locked', 'open')).toBe(false);
    expect(() => take(door, 'locked', 'open')).toThrow(/Cannot open a door that is locked/);
  });

  it('refuses actions that are not own keys of the table', () => {
    expect(canTake(door, 'open', 'toString' as never)).toBe(false);
  });

  it('finds final states and prints the table', () => {
    expect(finalStates(door)).toEqual(['locked', 'gone']);
    expect(transitionTable(door)).toContain('| `remove` | `open`, `closed` | `gone` |');
  });

  it('rejects a table naming an unknown state', () => {
    expect(() => stateMachine('x', ['a'] as const, { go: { from: ['a'], to: 'b' as 'a' } })).toThrow(/unknown state b/);
  });
});
