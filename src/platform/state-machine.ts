import { invalidState } from './errors.js';

/**
 * The one shape of every state machine in the product (jobs, contracts, invoices,
 * winter runs, …): a table of allowed moves keyed by the current state, each move
 * named by the action that makes it. Services consult the table for every move,
 * including the ones a worker makes; the table is printed into the resource's doc
 * page by `transitionTable`, so the docs cannot disagree with the code.
 */
export interface StateMachine<S extends string, A extends string> {
  /** Singular resource name for messages, e.g. `job`. */
  readonly resource: string;
  readonly states: readonly S[];
  /** action → the states it may start from and the state it leads to. */
  readonly moves: Readonly<Record<A, { readonly from: readonly S[]; readonly to: S }>>;
}

export function stateMachine<const S extends string, const A extends string>(
  resource: string,
  states: readonly S[],
  moves: Record<A, { from: readonly S[]; to: S }>,
): StateMachine<S, A> {
  for (const [action, move] of Object.entries(moves) as Array<[A, { from: readonly S[]; to: S }]>) {
    for (const s of [...move.from, move.to]) {
      if (!states.includes(s)) throw new Error(`${resource} machine: ${action} names unknown state ${s}`);
    }
  }
  return { resource, states, moves };
}

/** Whether `action` may be taken from `from`. */
export function canTake<S extends string, A extends string>(m: StateMachine<S, A>, from: S, action: A): boolean {
  return Object.hasOwn(m.moves, action) && m.moves[action].from.includes(from);
}

/**
 * The state `action` leads to from `from`, or 409 INVALID_STATE naming the current
 * state and the action, so a client can tell what went wrong without the docs.
 */
export function take<S extends string, A extends string>(m: StateMachine<S, A>, from: S, action: A): S {
  if (!canTake(m, from, action)) {
    throw invalidState(`Cannot ${action.replaceAll('_', ' ')} a ${m.resource} that is ${from.replaceAll('_', ' ')}`);
  }
  return m.moves[action].to;
}

/** States no action leaves. */
export function finalStates<S extends string, A extends string>(m: StateMachine<S, A>): S[] {
  const left = new Set(Object.values<{ from: readonly S[] }>(m.moves).flatMap((move) => move.from));
  return m.states.filter((s) => !left.has(s));
}

/** The table as Markdown (action | from | to), for the resource's doc page. */
export function transitionTable<S extends string, A extends string>(m: StateMachine<S, A>): string {
  const rows = (Object.entries(m.moves) as Array<[A, { from: readonly S[]; to: S }]>).map(
    ([action, move]) => `| \`${action}\` | ${move.from.map((s) => `\`${s}\``).join(', ')} | \`${move.to}\` |`,
  );
  return ['| action | from | to |', '| --- | --- | --- |', ...rows].join('\n');
}
