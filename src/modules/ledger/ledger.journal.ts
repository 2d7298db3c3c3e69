import { sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client.js';
import { invalidField } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';
import { accountOf } from './ledger.accounts.js';
import { accountNames } from './ledger.mappings.js';

/*
 * The journal over a range of days, read through a server-side cursor in the caller's
 * transaction: rows arrive FETCH_SIZE at a time and leave as entries as soon as each is whole,
 * so an export of any size holds one batch in memory, and every row comes from the one snapshot
 * the cursor was declared in (an entry posted meanwhile is either wholly in or wholly out).
 */

const FETCH_SIZE = 1000;

export interface JournalLine {
  accountCode: string;
  accountName: string;
  /** The account's code and name in the accountant's system (PATCH /api/ledger/accounts/{code}). */
  externalCode: string;
  externalName: string;
  debitCents: number;
  creditCents: number;
}

export interface JournalEntry {
  id: string;
  /** `YYYYMMDD-NNNN`: the entry's rank within its day, stable once the day is closed. */
  journalNo: string;
  entryDate: string;
  sourceType: string;
  sourceId: string;
  memo: string;
  lines: JournalLine[];
}

interface Row {
  entry_id: string;
  entry_date: string;
  source_type: string;
  source_id: string;
  memo: string;
  day_rank: number;
  account_code: string;
  debit_cents: string | number;
  credit_cents: string | number;
}

export function checkRange(from: string, to: string) {
  if (from > to) throw invalidField('to', `must not be before from (${from})`);
}

/** The entries dated from..to (inclusive), oldest first, each with its lines in posting order. */
export async function* journalEntries(ctx: Ctx, from: string, to: string): AsyncGenerator<JournalEntry> {
  checkRange(from, to);
  const names = await accountNames(ctx);
  // The rank counts every entry of the day (the range starts and ends on whole days).
  await ctx.tx.execute(sql`
    DECLARE ledger_journal NO SCROLL CURSOR FOR
    SELECT e.id AS entry_id, e.entry_date::text AS entry_date, e.source_type, e.source_id, e.memo,
           dense_rank() OVER (PARTITION BY e.entry_date ORDER BY e.id)::int AS day_rank,
           l.account_code, l.debit_cents, l.credit_cents
    FROM ledger_entries e
    JOIN ledger_lines l ON l.organization_id = e.organization_id AND l.entry_id = e.id
    WHERE e.organization_id = ${ctx.organizationId} AND e.entry_date BETWEEN ${from} AND ${to}
    ORDER BY e.entry_date, e.id, l.position`);
  let current: JournalEntry | undefined;
  try {
    for (;;) {
      const rows = rowsOf<Row>(await ctx.tx.execute(sql.raw(`FETCH FORWARD ${FETCH_SIZE} FROM ledger_journal`)));
      for (const r of rows) {
        if (current?.id !== r.entry_id) {
          if (current) yield current;
          current = {
            id: r.entry_id,
            journalNo: `${r.entry_date.replaceAll('-', '')}-${String(r.day_rank).padStart(4, '0')}`,
            entryDate: r.entry_date,
            sourceType: r.source_type,
            sourceId: r.source_id,
            memo: r.memo,
            lines: [],
          };
        }
        const name = names.get(r.account_code);
        const ours = accountOf(r.account_code)?.name ?? r.account_code;
        current.lines.push({
          accountCode: r.account_code,
          accountName: ours,
          externalCode: name?.externalCode ?? r.account_code,
          externalName: name?.externalName ?? ours,
          debitCents: Number(r.debit_cents),
          creditCents: Number(r.credit_cents),
        });
      }
      if (rows.length < FETCH_SIZE) break;
    }
    if (current) yield current;
  } finally {
    await ctx.tx.execute(sql`CLOSE ledger_journal`);
  }
}
