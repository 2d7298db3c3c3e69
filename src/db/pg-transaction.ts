import type pg from 'pg';
import { inlineParameters } from './inline-parameters.js';

/** Clients whose ROLLBACK failed: their connection state is unknown, so the pool must not hand them out again. */
const unusable = new WeakSet<pg.PoolClient>();

/**
 * `fn` inside BEGIN … COMMIT on a client the caller checked out; ROLLBACK on any error
 * (BEGIN's included). `begin` may carry statements sent with BEGIN in the same round trip
 * (tenancy.ts sets the tenant's settings that way). Give the client back with releaseClient.
 */
export async function transactionOn<T>(client: pg.PoolClient, fn: () => Promise<T>, begin = 'BEGIN'): Promise<T> {
  try {
    await client.query(begin);
    const result = await fn();
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {
      unusable.add(client);
    });
    throw err;
  }
}

/** Returns the client to its pool, or discards it when a ROLLBACK on it failed. */
export function releaseClient(client: pg.PoolClient): void {
  client.release(unusable.has(client) || undefined);
}

/** A query as Drizzle and own code hand it to pg: text, or a config object, values in it or beside it. */
type QueryConfig = { text: string; values?: unknown[]; rowMode?: 'array'; types?: unknown };

/** A statement that, by its text, only reads: a SELECT that locks no row and sets nothing. */
const SELECT = /^\s*\(?\s*select\b/i;
const NOT_ONLY_READING =
  /\bfor\s+(?:update|no\s+key\s+update|share|key\s+share)\b|\bpg_(?:try_)?advisory|\bset_config\b|\bpg_notify\b|\bnextval\b|\bsetval\b/i;

/** SQLSTATE 25006: a write refused because the transaction is read-only. */
const isReadOnlyRefusal = (err: unknown) => (err as { code?: unknown } | null)?.code === '25006';

/**
 * The connection a deferred transaction hands to Drizzle (as its session's client): the tenant
 * transaction in as few round trips as its statements allow.
 *
 * Until the first statement that may write, nothing is begun: each reading statement goes out
 * as ONE simple-protocol message, `SELECT <settings>, <read-only>; <statement>`, which
 * PostgreSQL runs as one implicit transaction, so the settings (role, tenant) hold for that
 * statement alone, RLS applies as inside BEGIN, and no COMMIT is needed: a request that only reads
 * (most pages) costs one round trip a statement and nothing more. Under READ COMMITTED every
 * statement of a transaction takes its own snapshot anyway, so reads outside BEGIN see what they
 * would have seen inside it. The read-only setting makes the classification safe: a SELECT that
 * writes after all (a function that writes) is refused by PostgreSQL, having done nothing, and
 * is sent again as below.
 *
 * The first other statement (a write, a locking read, a savepoint) goes out as ONE message with
 * BEGIN and the settings in front; from then on statements run inside that transaction as
 * usual, and the caller commits it (one more round trip, only for requests that write).
 * Values are written into the text as literals (src/db/inline-parameters.ts), as the
 * platform pool does: the simple protocol has no parameters, and nothing is prepared, so it
 * works behind PgBouncer's transaction pooling.
 */
export class DeferredTransaction {
  #begun = false;
  readonly #client: pg.PoolClient;
  readonly #settings: string;

  /** `settings`: one SELECT of `set_config(…, true)` calls. */
  constructor(client: pg.PoolClient, settings: string) {
    this.#client = client;
    this.#settings = settings;
  }

  /** Whether BEGIN has been sent (the caller then owes COMMIT or ROLLBACK). */
  get begun(): boolean {
    return this.#begun;
  }

  // pg's callback and submittable overloads are not used by Drizzle or own code on a transaction.
  async query(textOrConfig: string | QueryConfig, values?: unknown[]): Promise<pg.QueryResult> {
    const config: QueryConfig = typeof textOrConfig === 'string' ? { text: textOrConfig } : textOrConfig;
    const params = (Array.isArray(values) ? values : config.values) ?? [];
    if (this.#begun) return this.#client.query({ ...config, values: params } as pg.QueryConfig);
    const options = {
      ...(config.rowMode ? { rowMode: config.rowMode } : {}),
      ...(config.types ? { types: config.types } : {}),
    };
    const statement = inlineParameters(config.text, params);
    if (SELECT.test(config.text) && !NOT_ONLY_READING.test(config.text)) {
      try {
        const text = `${this.#settings}, set_config('transaction_read_only', 'on', true); ${statement}`;
        return secondResult(await this.#client.query({ text, ...options } as pg.QueryConfig), 1);
      } catch (err) {
        if (!isReadOnlyRefusal(err)) throw err;
        // It writes: nothing was done (its implicit transaction failed), so again inside BEGIN.
        if (this.#begun) return this.#client.query({ ...config, values: params } as pg.QueryConfig);
      }
    }
    this.#begun = true;
    const text = `BEGIN; ${this.#settings}; ${statement}`;
    return secondResult(await this.#client.query({ text, ...options } as pg.QueryConfig), 2);
  }
}

/** The result of the caller's statement in the answer to a message of several. */
function secondResult(results: unknown, index: number): pg.QueryResult {
  return (results as pg.QueryResult[])[index] as pg.QueryResult;
}

/**
 * `fn` on a DeferredTransaction over a client the caller checked out: COMMIT if a
 * transaction was begun, ROLLBACK on any error once begun. Give the client back with releaseClient.
 */
export async function deferredTransactionOn<T>(
  client: pg.PoolClient,
  settings: string,
  fn: (connection: DeferredTransaction) => Promise<T>,
): Promise<T> {
  const connection = new DeferredTransaction(client, settings);
  try {
    const result = await fn(connection);
    if (connection.begun) await client.query('COMMIT');
    return result;
  } catch (err) {
    if (connection.begun) {
      await client.query('ROLLBACK').catch(() => {
        unusable.add(client);
      });
    }
    throw err;
  }
}
