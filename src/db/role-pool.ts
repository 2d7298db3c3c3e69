import pg from 'pg';
import { inlineParameters } from './inline-parameters.js';
import { releaseClient, transactionOn } from './pg-transaction.js';

export { inlineParameters };

/*
 * A pool whose every statement runs as one role, switched inside the statement's own
 * transaction: nothing is set on the connection itself, so it works unchanged behind
 * PgBouncer in transaction pooling, which hands a server connection to another client
 * after each transaction and drops startup options such as `-c role=` (a pool that relied
 * on one ran as the login role: the superuser, when that is what DATABASE_URL names).
 *
 * A statement outside a transaction is sent as ONE simple-protocol message,
 * `SELECT set_config('role', 'r', true); <statement>` (SET LOCAL ROLE, as a function: on Citus
 * a SET command is passed on to the workers with the text of its whole message, so the
 * statement after it would run again on each worker, nested; Citus opens its worker
 * connections as the current role anyway): PostgreSQL runs the statements of one message as one
 * implicit transaction, so the role holds for that statement alone and ends with it, in one
 * round trip, and no statement is prepared (transaction pooling would meet a named
 * statement on a server connection that never saw it, or that another client prepared it
 * on). The simple protocol carries no parameters, so the values are written into the text
 * as quoted literals: pg's own conversion (`prepareValue`, as for a parameter) then its
 * `escapeLiteral`. A quoted literal is of unknown type until its context decides, exactly
 * as a parameter that pg sends without a type (it sends none), so the statement means what
 * it meant with parameters.
 */

/** A query as pg takes it: the config object Drizzle passes, or text. */
type QueryConfig = pg.QueryConfig & { rowMode?: 'array'; types?: unknown };

export class RolePool extends pg.Pool {
  readonly role: string;
  /** The role for the current transaction only (SET LOCAL ROLE). */
  readonly #switch: string;

  constructor(config: pg.PoolConfig, role: string) {
    super(config);
    if (!/^[a-z_][a-z0-9_]*$/.test(role)) throw new Error(`Not a plain role name: ${role}`);
    this.role = role;
    this.#switch = `SELECT set_config('role', '${role}', true)`;
  }

  // pg's overloads (callbacks, submittables) are not used on this pool: Drizzle and the
  // worker call query(config | text, values?) and await the promise.
  override query(textOrConfig: unknown, values?: unknown, callback?: unknown): Promise<pg.QueryResult> {
    if (typeof callback === 'function' || typeof values === 'function') {
      throw new Error('RolePool.query takes no callback');
    }
    const config: QueryConfig =
      typeof textOrConfig === 'string' ? { text: textOrConfig } : { ...(textOrConfig as QueryConfig) };
    const params = (Array.isArray(values) ? values : config.values) ?? [];
    const text = `${this.#switch}; ${inlineParameters(config.text, params)}`;
    const { rowMode, types } = config;
    const sent = super.query({ text, ...(rowMode ? { rowMode } : {}), ...(types ? { types } : {}) } as pg.QueryConfig);
    // Two statements, two results: the caller's is the second.
    return sent.then((results) => (results as unknown as pg.QueryResult[])[1] as pg.QueryResult);
  }

  /**
   * `fn` in BEGIN … COMMIT as this pool's role, BEGIN and the role in one round trip, on a
   * client checked out for it (the Drizzle handle's `transaction`, see openDatabase).
   */
  async transactionAsRole<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.connect();
    try {
      return await transactionOn(client, () => fn(client), `BEGIN; ${this.#switch}`);
    } finally {
      releaseClient(client);
    }
  }
}
