import {
  messages,
  type PGlite,
  type QueryOptions,
  type Results,
  TransactionAbortedError,
  types,
} from '@electric-sql/pglite';
import { serialize } from 'pg-protocol';
import type {
  BackendMessage,
  DatabaseError,
  DataRowMessage,
  RowDescriptionMessage,
} from 'pg-protocol/dist/messages.js';
import { Parser } from 'pg-protocol/dist/parser.js';

/*
 * PGlite's `query`, `exec` and `transaction` with the same results, in fewer calls into the
 * engine and a faster reading of its answers (measured: docs/customers.md, "PGlite").
 *
 * PGlite's own `query` sends Parse, Describe, Bind, Describe, Execute and Sync as six calls into
 * WebAssembly, and reads every answer with its own protocol parser, which copies each field
 * before decoding it; a transaction adds BEGIN and COMMIT, two calls each. Here:
 *  - a statement is one call: Parse, Bind, Describe, Execute and Sync as one batch of messages.
 *    The parameters are converted as PGlite converts them, by the type PostgreSQL infers for each
 *    (its `serializers`); those types are asked once per statement text (Parse and Describe) and
 *    remembered for this database;
 *  - the answer arrives as raw bytes (`execProtocolRawStream`, which runs no parser of its own)
 *    and is read by node-postgres's protocol parser (`pg-protocol`), then converted by PGlite's
 *    own type parsers, exactly as PGlite's `query` would (rows, fields, command, counts, errors);
 *  - a transaction sends BEGIN (and the caller's settings, `transaction(fn, settings)`) with its
 *    first statement, in the same call, and COMMIT as the one more call; one that runs no
 *    statement sends nothing.
 * PGlite's mutexes are taken as its own methods take them, so this and code calling the PGlite
 * instance directly (migrations, LISTEN) never interleave. Notifications that arrive in these
 * answers go to the listeners registered through `listen` here (src/db/listen.ts).
 */

/** What `transaction` hands its callback: the part of PGlite's Transaction that Drizzle and own code use. */
export interface PgliteTx {
  query<T>(query: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(query: string, options?: QueryOptions): Promise<Results[]>;
  rollback(): Promise<void>;
  readonly closed: boolean;
}

type Listener = (payload: string) => void;

/** Statement texts whose parameter types are remembered per database: beyond this the memory starts over. */
const MAX_REMEMBERED = 5_000;

const NO_TYPES: number[] = [];

export class PgliteClient {
  readonly pglite: PGlite;
  /** Parameter type OIDs per statement text, as PostgreSQL inferred them. */
  readonly #paramTypes = new Map<string, number[]>();
  readonly #listeners = new Map<string, Set<Listener>>();

  constructor(pglite: PGlite) {
    this.pglite = pglite;
  }

  /** One statement with `$n` parameters, outside any transaction (as PGlite's `query`). */
  async query<T>(query: string, params: unknown[] = [], options?: QueryOptions): Promise<Results<T>> {
    if (!handledHere(options)) return this.pglite.query<T>(query, params, options);
    await this.pglite._checkReady();
    return this.pglite._runExclusiveTransaction(() =>
      this.pglite._runExclusiveQuery(async () => {
        const result = this.#statement<T>(query, params, options, undefined);
        await this.pglite.syncToFs();
        return result;
      }),
    );
  }

  /** Statements in the simple protocol, no parameters, outside any transaction (as PGlite's `exec`). */
  async exec(query: string, options?: QueryOptions): Promise<Results[]> {
    if (!handledHere(options)) return this.pglite.exec(query, options);
    await this.pglite._checkReady();
    return this.pglite._runExclusiveTransaction(() =>
      this.pglite._runExclusiveQuery(async () => {
        const results = this.#simple(query, options, undefined);
        await this.pglite.syncToFs();
        return results;
      }),
    );
  }

  /**
   * `fn` in one transaction, as PGlite's `transaction` (COMMIT after, ROLLBACK on error, an error
   * when COMMIT rolls back an aborted transaction), with BEGIN and `settings` (statements in the
   * simple protocol, e.g. `SELECT set_config(…, true)`) sent with the first statement.
   */
  async transaction<T>(fn: (tx: PgliteTx) => Promise<T>, settings?: string): Promise<T> {
    await this.pglite._checkReady();
    return this.pglite._runExclusiveTransaction(async () => {
      let pending: string | undefined = settings ? `BEGIN; ${settings}` : 'BEGIN';
      let begun = false;
      let closed = false;
      const prelude = () => {
        const sent = pending;
        pending = undefined;
        begun = true;
        return sent;
      };
      const open = () => {
        if (closed) throw new Error('Transaction is closed');
      };
      const exclusive = <R>(fn: () => R) => this.pglite._runExclusiveQuery(async () => fn());
      const tx: PgliteTx = {
        query: async <R>(query: string, params: unknown[] = [], options?: QueryOptions) => {
          open();
          if (!handledHere(options)) throw new Error('PgliteClient: unsupported query options in a transaction');
          return exclusive(() => this.#statement<R>(query, params, options, prelude));
        },
        exec: async (query: string, options?: QueryOptions) => {
          open();
          if (!handledHere(options)) throw new Error('PgliteClient: unsupported query options in a transaction');
          return exclusive(() => this.#simple(query, options, prelude));
        },
        rollback: async () => {
          open();
          if (begun) await exclusive(() => this.#simple('ROLLBACK', undefined, undefined));
          closed = true;
        },
        get closed() {
          return closed;
        },
      };
      try {
        const result = await fn(tx);
        if (!closed) {
          closed = true;
          if (begun) {
            const [done] = await exclusive(() => this.#simple('COMMIT', undefined, undefined));
            if (done?.command === 'ROLLBACK')
              throw withQuery(new TransactionAbortedError(), 'COMMIT', undefined, undefined);
          }
        }
        return result;
      } catch (err) {
        if (!closed) {
          closed = true;
          if (begun) await exclusive(() => this.#simple('ROLLBACK', undefined, undefined));
        }
        throw err;
      }
    });
  }

  /**
   * PGlite's `listen`, with `callback` also called for the notifications that arrive in this
   * client's answers (a NOTIFY committed through it). Returns the function that stops listening.
   */
  async listen(channel: string, callback: Listener): Promise<() => Promise<void>> {
    const unlisten = await this.pglite.listen(channel, callback);
    const name = channel.startsWith('"') && channel.endsWith('"') ? channel.slice(1, -1) : channel.toLowerCase();
    let set = this.#listeners.get(name);
    if (!set) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(callback);
    return async () => {
      set.delete(callback);
      await unlisten();
    };
  }

  /** One extended-protocol statement in one call (two the first time its text is seen with parameters). */
  #statement<T>(
    query: string,
    params: unknown[],
    options: QueryOptions | undefined,
    prelude: (() => string | undefined) | undefined,
  ): Results<T> {
    let first = prelude?.();
    let oids = params.length === 0 ? NO_TYPES : this.#paramTypes.get(query);
    if (!oids) {
      const learnt = this.#send(
        [
          ...(first ? [serialize.query(first)] : []),
          serialize.parse({ text: query }),
          serialize.describe({ type: 'S' }),
          serialize.sync(),
        ],
        options,
        first !== undefined,
      );
      first = undefined;
      if (learnt.error) throw withQuery(asPgliteError(learnt.error), query, params, options);
      oids = learnt.paramTypes ?? NO_TYPES;
      if (this.#paramTypes.size >= MAX_REMEMBERED) this.#paramTypes.clear();
      this.#paramTypes.set(query, oids);
    }
    const values = params.map((param, i) => {
      if (param === null || param === undefined) return null;
      const oid = oids[i] as number;
      const serializer = options?.serializers?.[oid] ?? this.pglite.serializers[oid];
      return serializer ? serializer(param) : String(param);
    });
    const answer = this.#send(
      [
        ...(first ? [serialize.query(first)] : []),
        serialize.parse({ text: query }),
        serialize.bind({ values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
        serialize.sync(),
      ],
      options,
      first !== undefined,
    );
    if (answer.error) throw withQuery(asPgliteError(answer.error), query, params, options);
    return (answer.results[0] ?? emptyResult()) as Results<T>;
  }

  /** Statements in the simple protocol in one call. */
  #simple(
    query: string,
    options: QueryOptions | undefined,
    prelude: (() => string | undefined) | undefined,
  ): Results[] {
    const first = prelude?.();
    const answer = this.#send(
      [...(first ? [serialize.query(first)] : []), serialize.query(query)],
      options,
      first !== undefined,
    );
    if (answer.error) throw withQuery(asPgliteError(answer.error), query, undefined, options);
    return answer.results.length > 0 ? answer.results : [emptyResult()];
  }

  /**
   * The messages as one call into the engine; the answer read as PGlite's `parseResults` reads it.
   * `skipFirst`: the answer to the first message (the transaction's prelude, up to its
   * ReadyForQuery) is not the caller's, except for an error.
   */
  #send(parts: Buffer[], options: QueryOptions | undefined, skipFirst: boolean): Answer {
    const chunks: Buffer[] = [];
    // execProtocolRawStream is synchronous up to its file-system sync, which is not asked for:
    // the chunks are views of the engine's memory, copied before it writes again.
    void this.pglite.execProtocolRawStream(Buffer.concat(parts), {
      syncToFs: false,
      onRawData: (bytes) => chunks.push(Buffer.from(bytes)),
    });
    const reader = new AnswerReader(this.pglite.parsers, options?.parsers, skipFirst, options?.rowMode === 'array');
    new Parser().parse(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks), reader.take);
    for (const { channel, payload } of reader.notifications) {
      for (const listener of this.#listeners.get(channel) ?? []) queueMicrotask(() => listener(payload));
    }
    return reader;
  }
}

interface Answer {
  results: Results[];
  error: DatabaseError | undefined;
  paramTypes: number[] | undefined;
}

type ParserFn = (value: string, typeId?: number) => unknown;

/** The backend messages of one answer into PGlite's result shape (src/parse.ts of PGlite, same rules). */
class AnswerReader implements Answer {
  results: Results[] = [];
  error: DatabaseError | undefined;
  paramTypes: number[] | undefined;
  notifications: Array<{ channel: string; payload: string }> = [];
  #skipping: boolean;
  #current: Results = { rows: [], fields: [] };
  #parsers: Array<ParserFn | undefined> = [];
  #names: string[] = [];
  #affectedRows = 0;
  readonly #defaults: Record<number | string, ParserFn>;
  readonly #overrides: Partial<Record<number, ParserFn>> | undefined;
  readonly #asArrays: boolean;

  constructor(
    defaults: Record<number | string, ParserFn>,
    overrides: Partial<Record<number, ParserFn>> | undefined,
    skipFirst: boolean,
    asArrays: boolean,
  ) {
    this.#defaults = defaults;
    this.#overrides = overrides;
    this.#skipping = skipFirst;
    this.#asArrays = asArrays;
  }

  readonly take = (msg: BackendMessage): void => {
    if (msg.name === 'error') {
      this.error ??= msg as DatabaseError;
      return;
    }
    if (msg.name === 'notification') {
      const m = msg as unknown as { channel: string; payload: string };
      this.notifications.push({ channel: m.channel, payload: m.payload });
      return;
    }
    if (this.#skipping) {
      if (msg.name === 'readyForQuery') this.#skipping = false;
      return;
    }
    switch (msg.name) {
      case 'parameterDescription':
        this.paramTypes = (msg as unknown as { dataTypeIDs: number[] }).dataTypeIDs;
        break;
      case 'rowDescription': {
        const fields = (msg as RowDescriptionMessage).fields;
        this.#current.fields = fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
        this.#names = fields.map((f) => f.name);
        this.#parsers = fields.map(
          (f) => this.#overrides?.[f.dataTypeID] ?? this.#defaults[f.dataTypeID] ?? types.parsers[f.dataTypeID],
        );
        break;
      }
      case 'dataRow': {
        const values = (msg as DataRowMessage).fields as Array<string | null>;
        const n = values.length;
        const fields = this.#current.fields;
        if (this.#asArrays) {
          const row: unknown[] = new Array(n);
          for (let i = 0; i < n; i++) row[i] = this.#value(values[i] ?? null, i, fields[i]?.dataTypeID);
          this.#current.rows.push(row);
        } else {
          const row: Record<string, unknown> = {};
          for (let i = 0; i < n; i++) {
            row[this.#names[i] as string] = this.#value(values[i] ?? null, i, fields[i]?.dataTypeID);
          }
          this.#current.rows.push(row);
        }
        break;
      }
      case 'commandComplete': {
        // As PGlite: the count is the tag's last word; affectedRows adds up over the answer.
        const parts = (msg as unknown as { text: string }).text.split(' ');
        const command = parts[0];
        const rowCount = Number.parseInt(parts[parts.length - 1] as string, 10);
        switch (command) {
          case 'INSERT':
          case 'UPDATE':
          case 'DELETE':
          case 'COPY':
          case 'MERGE':
            this.#affectedRows += rowCount;
            break;
        }
        const result: Results = { ...this.#current, affectedRows: this.#affectedRows };
        (result as { command?: string }).command = command;
        if (!Number.isNaN(rowCount)) (result as { rowCount?: number }).rowCount = rowCount;
        this.results.push(result);
        this.#current = { rows: [], fields: [] };
        this.#parsers = [];
        this.#names = [];
        break;
      }
    }
  };

  #value(raw: string | null, i: number, typeId: number | undefined): unknown {
    if (raw === null) return null;
    const parse = this.#parsers[i];
    return parse ? parse(raw, typeId) : raw;
  }
}

/** Options this client implements; anything else (blobs for COPY, notices, parameter types) goes to PGlite. */
function handledHere(options: QueryOptions | undefined): boolean {
  if (!options) return true;
  return (
    options.blob === undefined &&
    options.onNotice === undefined &&
    options.paramTypes === undefined &&
    (options.rowMode === undefined || options.rowMode === 'array' || options.rowMode === 'object')
  );
}

function emptyResult(): Results {
  return { affectedRows: 0, rows: [], fields: [] };
}

const ERROR_FIELDS = [
  'severity',
  'code',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
] as const;

/** node-postgres's DatabaseError as the class PGlite throws, with the same fields. */
function asPgliteError(e: DatabaseError): InstanceType<typeof messages.DatabaseError> {
  const err = new messages.DatabaseError(e.message, e.length, 'error');
  for (const field of ERROR_FIELDS) (err as unknown as Record<string, unknown>)[field] = e[field];
  return err;
}

/** As PGlite's makePGliteError: the statement, its values and options on the error. */
function withQuery<E extends Error>(
  err: E,
  query: string,
  params: unknown[] | undefined,
  options: QueryOptions | undefined,
): E {
  return Object.assign(err, { query, params, queryOptions: options });
}
