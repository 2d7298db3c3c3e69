import { invalidState } from './errors.js';

/**
 * The one shape of every state machine in the product (jobs, contracts, invoices,
 * winter runs, …): for each state, the triggers it accepts and the state each leads to.
 * Keyed by state rather than by action because that is what the rules say: a resend
 * keeps whatever state an estimate is in, and a refund reopens a paid invoice to
 * `partially_paid` but leaves a void one void. A trigger missing from a state's row is
 * refused with 409 INVALID_STATE.
 *
 * Services consult the table for every move, including the ones a worker makes; the
 * table is printed into the resource's doc page by `transitionTable` (a test keeps the
 * page current), so the docs cannot disagree with the code.
 */
export interface StateMachine<S extends string, T extends string> {
  /** Singular resource name for messages, e.g. `job`, `invoice`. */
  readonly resource: string;
  /** Every state, in the table's order. */
  readonly states: readonly S[];
  readonly table: Readonly<Record<S, Readonly<Partial<Record<T, S>>>>>;
}

export function stateMachine<const S extends string, const T extends string>(
  resource: string,
  table: Record<S, Partial<Record<T, S>>>,
): StateMachine<S, T> {
  const states = Object.keys(table) as S[];
  for (const [from, row] of Object.entries(table) as Array<[S, Partial<Record<T, S>>]>) {
    for (const [trigger, to] of Object.entries(row) as Array<[T, S]>) {
      if (!Object.hasOwn(table, to))
        throw new Error(`${resource} machine: ${from} --${trigger}--> unknown state ${to}`);
    }
  }
  return { resource, states, table };
}

const words = (name: string) => name.replaceAll('_', ' ');
const article = (noun: string) => (/^[aeiou]/i.test(noun) ? 'an' : 'a');

/**
 * `phrase` behind the article that agrees with it, underscores read as spaces: refusals are
 * built from state names (`active`, `overdue`, `awaiting_approval`), so a fixed "A" read
 * "A active contract". `opening` capitalises it for the start of a sentence.
 * `withArticle('active contract', true)` is `An active contract`.
 */
export function withArticle(phrase: string, opening = false): string {
  const text = words(phrase);
  const a = article(text);
  return `${opening ? 'A' : 'a'}${a.slice(1)} ${text}`;
}

/** The state `trigger` leads to from `from`, or undefined when the table refuses it. */
export function next<S extends string, T extends string>(m: StateMachine<S, T>, from: S, trigger: T): S | undefined {
  const row = Object.hasOwn(m.table, from) ? m.table[from] : undefined;
  return row && Object.hasOwn(row, trigger) ? row[trigger] : undefined;
}

/** Whether `trigger` may be taken from `from`. */
export function canTake<S extends string, T extends string>(m: StateMachine<S, T>, from: S, trigger: T): boolean {
  return next(m, from, trigger) !== undefined;
}

/**
 * The state `trigger` leads to from `from`, or 409 INVALID_STATE naming the current
 * state and the trigger, so a client can tell what went wrong without the docs.
 */
export function take<S extends string, T extends string>(m: StateMachine<S, T>, from: S, trigger: T): S {
  const to = next(m, from, trigger);
  if (to === undefined) {
    throw invalidState(`Cannot ${words(trigger)} ${withArticle(m.resource)} that is ${words(from)}`);
  }
  return to;
}

/** The states `trigger` may be taken from (for SQL filters such as "every open job"). */
export function statesAccepting<S extends string, T extends string>(m: StateMachine<S, T>, trigger: T): S[] {
  return m.states.filter((s) => canTake(m, s, trigger));
}

/** States no trigger leaves (a trigger that keeps the state does not count as leaving). */
export function finalStates<S extends string, T extends string>(m: StateMachine<S, T>): S[] {
  return m.states.filter((s) => Object.values(m.table[s]).every((to) => to === s));
}

/** The table as Markdown (from | trigger | to), for the resource's doc page. */
export function transitionTable<S extends string, T extends string>(m: StateMachine<S, T>): string {
  const rows = m.states.flatMap((from) => {
    const moves = Object.entries(m.table[from]) as Array<[T, S]>;
    if (moves.length === 0) return [`| \`${from}\` | (none: final) | |`];
    return moves.map(([trigger, to]) => `| \`${from}\` | \`${trigger}\` | \`${to}\` |`);
  });
  return ['| from | trigger | to |', '| --- | --- | --- |', ...rows].join('\n');
}
