import { describe, expect, it } from 'vitest';
import {
  canTake,
  finalStates,
  stateMachine,
  statesAccepting,
  take,
  transitionTable,
  withArticle,
} from './state-machine.js';

const door = stateMachine('door', {
  open: { close: 'closed', remove: 'gone', paint: 'open' },
  closed: { open: 'open', lock: 'locked', remove: 'gone', paint: 'closed' },
  locked: { paint: 'locked' },
  gone: {},
});

describe('stateMachine', () => {
  it('allows only the moves in the table', () => {
    expect(take(door, 'open', 'close')).toBe('closed');
    expect(canTake(door, 'locked', 'open')).toBe(false);
    expect(() => take(door, 'locked', 'open')).toThrow(/Cannot open a door that is locked/);
  });

  it('lets a trigger keep the state or lead to different states from different origins', () => {
    expect(take(door, 'closed', 'paint')).toBe('closed');
    expect(take(door, 'locked', 'paint')).toBe('locked');
    expect(statesAccepting(door, 'remove')).toEqual(['open', 'closed']);
  });

  it('refuses triggers and states that are not own keys of the table', () => {
    expect(canTake(door, 'open', 'toString' as never)).toBe(false);
    expect(canTake(door, 'constructor' as never, 'open')).toBe(false);
  });

  it('finds final states (a trigger that keeps the state does not leave it) and prints the table', () => {
    expect(finalStates(door)).toEqual(['locked', 'gone']);
    expect(transitionTable(door)).toContain('| `closed` | `remove` | `gone` |');
    expect(transitionTable(door)).toContain('| `gone` | (none: final) | |');
  });

  it('rejects a table naming an unknown state', () => {
    expect(() => stateMachine('x', { a: { go: 'b' as 'a' } })).toThrow(/unknown state b/);
  });

  it('says "an" before a vowel', () => {
    const m = stateMachine<'sent' | 'void', 'void'>('invoice', { sent: { void: 'void' }, void: {} });
    expect(() => take(m, 'void', 'void')).toThrow(/Cannot void an invoice that is void/);
  });

  it('puts the article that agrees with a state name before it, for refusals built from states', () => {
    expect(withArticle('active contract', true)).toBe('An active contract');
    expect(withArticle('draft contract', true)).toBe('A draft contract');
    expect(withArticle('awaiting_approval bill', true)).toBe('An awaiting approval bill');
    expect(withArticle('written_off invoice')).toBe('a written off invoice');
    expect(withArticle('overdue invoice')).toBe('an overdue invoice');
  });
});
