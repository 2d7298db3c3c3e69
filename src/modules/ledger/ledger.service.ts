import { and, asc, eq, gte, inArray, lte, type SQL, sql } from 'drizzle-orm';
import { ledgerEntries, ledgerLines } from '../../db/schema/index.js';
import { today } from '../../platform/dates.js';
import { AppError, invalidField } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { fromCents } from '../../platform/money.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import type { Ctx } from '../../platform/tenancy.js';
import { getOrgSettings } from '../settings/settings.service.js';
import { type AccountCode, accountOf, CHART_OF_ACCOUNTS, debitNormal } from './ledger.accounts.js';
import { assertPeriodOpen, openDateFor } from './ledger.close.js';

/** What caused an entry. `refund` is for refunds of customer payments (issue 11). */
export type LedgerSourceType = 'invoice' | 'payment' | 'refund' | 'bill' | 'bill_payment';

/** One side of one account, in integer cents; exactly one of debit/credit is set. */
export type PostingLine = { accountCode: AccountCode; debit: number } | { accountCode: AccountCode; credit: number };

export interface Posting {
  sourceType: LedgerSourceType;
  sourceId: string;
  /** Why, in words ("Invoice INV-000001 sent"). */
  memo: string;
  lines: PostingLine[];
  /** Default: today in the organization's timezone. */
  entryDate?: string | undefined;
  /** The request's field that carries entryDate, named in a 409 PERIOD_CLOSED (default `date`: today). */
  dateField?: string | undefined;
  /**
   * Dates of the document that must not lie in the closed period either, although the entry is
   * dated today (an invoice whose invoiceDate lies there cannot leave draft: operations.md §11).
   */
  documentDates?: { field: string; date: string }[] | undefined;
  /**
   * What a processor (Stripe) already did, recorded from its webhook: never refused for the
   * close (operations.md §11); dated in the closed period, it posts on the first open day
   * instead (ledger.close.ts openDateFor), and documentDates are not checked.
   */
  processor?: boolean | undefined;
}

const amountOf = (l: PostingLine) => ('debit' in l ? l.debit : l.credit);

/**
 * Records one journal entry in the caller's transaction, so it commits or rolls
 * back with the change that caused it. The only way anything writes the ledger.
 * Lines of 0 are dropped (a void with nothing paid has no 2300 line); an entry
 * whose debits and credits differ, or with a negative or fractional amount, is a
 * programming error and fails the whole transaction. Returns null when nothing
 * is left to post (every line 0). A date in the closed period is a 409 PERIOD_CLOSED
 * naming its field, before anything is written.
 */
export async function postEntry(ctx: Ctx, posting: Posting): Promise<{ id: string } | null> {
  let debits = 0;
  let credits = 0;
  for (const line of posting.lines) {
    const amount = amountOf(line);
    if (!Number.isSafeInteger(amount) || amount < 0 || !accountOf(line.accountCode)) {
      throw new AppError('INTERNAL', `Invalid ledger line ${JSON.stringify(line)} for ${posting.sourceType}`);
    }
    if ('debit' in line) debits += amount;
    else credits += amount;
  }
  if (debits !== credits) {
    throw new AppError('INTERNAL', `Unbalanced ledger entry for ${posting.sourceType}: ${debits} ≠ ${credits}`);
  }
  let entryDate = posting.entryDate ?? today((await getOrgSettings(ctx)).timezone);
  // Checked before anything is written and with the close row held FOR SHARE until commit (ledger.close.ts).
  if (posting.processor) {
    entryDate = await openDateFor(ctx, entryDate);
  } else {
    await assertPeriodOpen(ctx, [
      ...(posting.documentDates ?? []),
      { field: posting.dateField ?? 'date', date: entryDate },
    ]);
  }
  const lines = posting.lines.filter((l) => amountOf(l) > 0);
  if (lines.length === 0) return null;
  const id = newId('jen');
  await ctx.tx.insert(ledgerEntries).values({
    id,
    organizationId: ctx.organizationId,
    entryDate,
    sourceType: posting.sourceType,
    sourceId: posting.sourceId,
    memo: posting.memo,
  });
  await ctx.tx.insert(ledgerLines).values(
    lines.map((l, position) => ({
      id: newId('jln'),
      organizationId: ctx.organizationId,
      entryId: id,
      position,
      accountCode: l.accountCode,
      debitCents: 'debit' in l ? l.debit : 0,
      creditCents: 'credit' in l ? l.credit : 0,
    })),
  );
  return { id };
}

type EntryRow = typeof ledgerEntries.$inferSelect;
type LineRow = typeof ledgerLines.$inferSelect;

function entryView(e: EntryRow, lines: LineRow[]) {
  return {
    id: e.id,
    entryDate: e.entryDate,
    sourceType: e.sourceType,
    sourceId: e.sourceId,
    memo: e.memo,
    lines: lines.map((l) => ({
      accountCode: l.accountCode,
      accountName: accountOf(l.accountCode)?.name ?? l.accountCode,
      debit: fromCents(l.debitCents),
      credit: fromCents(l.creditCents),
    })),
    createdAt: e.createdAt,
  };
}

export interface EntryFilter {
  sourceType?: string | undefined;
  sourceId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export async function listEntries(ctx: Ctx, f: EntryFilter, page: Page) {
  if (f.from && f.to && f.to < f.from) throw invalidField('to', `must not be before from (${f.from})`);
  const where: SQL[] = [eq(ledgerEntries.organizationId, ctx.organizationId)];
  if (f.sourceType) where.push(eq(ledgerEntries.sourceType, f.sourceType));
  if (f.sourceId) where.push(eq(ledgerEntries.sourceId, f.sourceId));
  if (f.from) where.push(gte(ledgerEntries.entryDate, f.from));
  if (f.to) where.push(lte(ledgerEntries.entryDate, f.to));
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, ledgerEntries, and(...where), page);
  const byEntry = new Map<string, LineRow[]>(rows.map((r) => [r.id, []]));
  if (rows.length > 0) {
    const lines = await ctx.tx
      .select()
      .from(ledgerLines)
      .where(
        and(
          eq(ledgerLines.organizationId, ctx.organizationId),
          inArray(
            ledgerLines.entryId,
            rows.map((r) => r.id),
          ),
        ),
      )
      .orderBy(asc(ledgerLines.entryId), asc(ledgerLines.position));
    for (const l of lines) byEntry.get(l.entryId)?.push(l);
  }
  return { rows: rows.map((r) => entryView(r, byEntry.get(r.id) ?? [])), ...more };
}

/** Debit and credit totals per account over entries dated on or before `asOf` (default today). */
export async function trialBalance(ctx: Ctx, asOf?: string) {
  const date = asOf ?? today((await getOrgSettings(ctx)).timezone);
  const sums = await ctx.tx
    .select({
      accountCode: ledgerLines.accountCode,
      debit: sql<string>`coalesce(sum(${ledgerLines.debitCents}), 0)`,
      credit: sql<string>`coalesce(sum(${ledgerLines.creditCents}), 0)`,
    })
    .from(ledgerLines)
    .innerJoin(ledgerEntries, eq(ledgerEntries.id, ledgerLines.entryId))
    .where(and(eq(ledgerLines.organizationId, ctx.organizationId), lte(ledgerEntries.entryDate, date)))
    .groupBy(ledgerLines.accountCode);
  const byCode = new Map(sums.map((s) => [s.accountCode, { debit: Number(s.debit), credit: Number(s.credit) }]));
  let totalDebit = 0;
  let totalCredit = 0;
  const accounts = CHART_OF_ACCOUNTS.map((a) => {
    const s = byCode.get(a.code) ?? { debit: 0, credit: 0 };
    totalDebit += s.debit;
    totalCredit += s.credit;
    const balance = debitNormal(a.type) ? s.debit - s.credit : s.credit - s.debit;
    return {
      code: a.code,
      name: a.name,
      type: a.type,
      debit: fromCents(s.debit),
      credit: fromCents(s.credit),
      balance: fromCents(balance),
    };
  });
  return {
    asOf: date,
    accounts,
    totalDebit: fromCents(totalDebit),
    totalCredit: fromCents(totalCredit),
    balanced: totalDebit === totalCredit,
  };
}
