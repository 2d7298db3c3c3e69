import type { billLines, bills } from '../../db/schema/index.js';
import type { Ctx } from '../../platform/tenancy.js';
import { ACCOUNT, type AccountCode } from '../ledger/ledger.accounts.js';
import { type PostingLine, postEntry } from '../ledger/ledger.service.js';

type BillRow = typeof bills.$inferSelect;
type LineRow = typeof billLines.$inferSelect;

/** The bill's lines summed per expense account, in chart order. */
function byAccount(lines: LineRow[]): [AccountCode, number][] {
  const sums = new Map<AccountCode, number>();
  for (const l of lines)
    sums.set(l.accountCode as AccountCode, (sums.get(l.accountCode as AccountCode) ?? 0) + l.amountCents);
  return [...sums.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** A bill becoming open: Dr each expense account, Cr 2000 Accounts Payable. */
export function postBillOpened(ctx: Ctx, bill: BillRow, lines: LineRow[]) {
  const debits: PostingLine[] = byAccount(lines).map(([accountCode, debit]) => ({ accountCode, debit }));
  return postEntry(ctx, {
    sourceType: 'bill',
    sourceId: bill.id,
    memo: `Bill ${bill.billNumber} posted`,
    documentDates: [{ field: 'billDate', date: bill.billDate }],
    lines: [...debits, { accountCode: ACCOUNT.payable, credit: bill.totalCents }],
  });
}

/** A void: the exact reverse of the posting. */
export function postBillVoided(ctx: Ctx, bill: BillRow, lines: LineRow[]) {
  const credits: PostingLine[] = byAccount(lines).map(([accountCode, credit]) => ({ accountCode, credit }));
  return postEntry(ctx, {
    sourceType: 'bill',
    sourceId: bill.id,
    memo: `Bill ${bill.billNumber} voided`,
    lines: [{ accountCode: ACCOUNT.payable, debit: bill.totalCents }, ...credits],
  });
}
