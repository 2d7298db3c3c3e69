import { sql } from 'drizzle-orm';
import { arrayRows } from '../../db/drizzle-adapter.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { accountOf } from './ledger.accounts.js';
import { accountNames } from './ledger.mappings.js';

/*
 * The journal over a range of days, read through a server-side cursor in the caller's
 * transaction: rows arrive FETCH_SIZE at a time as arrays (no per-column mapping) and leave as
 * batches, so an export of any size holds at most two batches in memory (the one being written
 * and the next, fetched meanwhile so the database works while the batch is formatted), and every
 * row comes from the one snapshot the cursor was declared in (an entry posted meanwhile is either
 * wholly in or wholly out). Rows arrive in entry order, each entry's lines together in posting
 * order, so a writer groups them by watching the entry id change (an entry may span two batches).
 * bench/parts/ledger-journal.ts measures it beside COPY (issue 46).
 */

const FETCH_SIZE = 5000;

/** An account as the journal writes it: ours, and its name and code in the accountant's system. */
export interface JournalAccount {
  code: string;
  name: string;
  /** PATCH /api/ledger/accounts/{code}; ours when none is set. */
  externalCode: string;
  externalName: string;
}

/** One ledger line with its entry's fields, in the select list's order. */
export type JournalRow = [
  entryId: string,
  /** `YYYY-MM-DD` */
  entryDate: string,
  sourceType: string,
  sourceId: string,
  memo: string,
  account: JournalAccount,
  debitCents: number,
  creditCents: number,
];

const ACCOUNT_COLUMN = 5;

export function checkRange(from: string, to: string) {
  if (from > to) throw invalidField('to', `must not be before from (${from})`);
}

/** The lines of the entries dated from..to (inclusive), oldest entry first, in batches. */
export async function* journalRows(ctx: Ctx, from: string, to: string): AsyncGenerator<JournalRow[]> {
  checkRange(from, to);
  const names = await accountNames(ctx);
  const accounts = new Map<string, JournalAccount>();
  const account = (code: string): JournalAccount => {
    let a = accounts.get(code);
    if (!a) {
      const name = names.get(code);
      const ours = accountOf(code)?.name ?? code;
      a = { code, name: ours, externalCode: name?.externalCode ?? code, externalName: name?.externalName ?? ours };
      accounts.set(code, a);
    }
    return a;
  };
  // Amounts as float8: exact for any cents a ledger holds, and a number on both drivers (bigint
  // is not). An entry's rank within its day (its journal number) is counted by the writer as the
  // rows pass, in this order: a window function here cost a second sort of every row.
  // Every row is read: plan for the whole result (a hash join and one sort, as COPY of these rows
  // does), not for the first tenth (a cursor's default, a nested loop of index probes).
  await ctx.tx.execute(sql`SET LOCAL cursor_tuple_fraction = 1.0`);
  await ctx.tx.execute(sql`
    DECLARE ledger_journal NO SCROLL CURSOR FOR
    SELECT e.id, e.entry_date::text, e.source_type, e.source_id, e.memo, l.account_code, l.debit_cents::float8, l.credit_cents::float8
    FROM ledger_entries e
    JOIN ledger_lines l ON l.organization_id = e.organization_id AND l.entry_id = e.id
    WHERE e.organization_id = ${ctx.organizationId} AND e.entry_date BETWEEN ${from} AND ${to}
    ORDER BY e.entry_date, e.id, l.position`);
  const fetchBatch = () => {
    const p = arrayRows(ctx.tx, `FETCH FORWARD ${FETCH_SIZE} FROM ledger_journal`, []);
    // Awaited below or in finally; marked handled so a failure while the consumer is busy
    // is not an unhandled rejection.
    p.catch(() => undefined);
    return p;
  };
  let next: Promise<unknown[][]> | undefined = fetchBatch();
  try {
    while (next) {
      const rows: unknown[][] = await next;
      next = rows.length === FETCH_SIZE ? fetchBatch() : undefined;
      for (const r of rows) r[ACCOUNT_COLUMN] = account(r[ACCOUNT_COLUMN] as string);
      if (rows.length > 0) yield rows as JournalRow[];
    }
  } finally {
    // A fetch still in flight (the client went away) finishes before the cursor closes.
    if (next) await next.catch(() => undefined);
    await ctx.tx.execute(sql`CLOSE ledger_journal`);
  }
}
