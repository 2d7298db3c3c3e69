import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { JournalEntry } from './ledger.journal.js';

/*
 * The journal's five formats (operations.md §11). Each is written from the entries as they
 * stream in; CSV and IIF go through csv-stringify, which quotes what needs quoting. Amounts are
 * written from integer cents with two decimals, never through floating point. json and csv
 * carry our account codes and names; iif, qbo and xero, which another system imports, carry the
 * account's external name and code (ours when none is set).
 */

export const JOURNAL_FORMATS = ['json', 'csv', 'iif', 'qbo', 'xero'] as const;
export type JournalFormat = (typeof JOURNAL_FORMATS)[number];

/** Content type and file extension of each format. */
export const JOURNAL_MEDIA: Record<JournalFormat, { type: string; ext: string }> = {
  json: { type: 'application/json; charset=utf-8', ext: 'json' },
  csv: { type: 'text/csv; charset=utf-8', ext: 'csv' },
  iif: { type: 'text/plain; charset=utf-8', ext: 'iif' },
  qbo: { type: 'text/csv; charset=utf-8', ext: 'csv' },
  xero: { type: 'text/csv; charset=utf-8', ext: 'csv' },
};

/** Integer cents as a decimal string (`-12.05`), exactly. */
export function money(cents: number): string {
  const abs = Math.abs(cents);
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

const blankIfZero = (cents: number) => (cents === 0 ? '' : money(cents));
/** `YYYY-MM-DD` → `MM/DD/YYYY`, the date form QuickBooks and Xero (US) import. */
const usDate = (d: string) => `${d.slice(5, 7)}/${d.slice(8, 10)}/${d.slice(0, 4)}`;
/** IIF has no quoting: a tab or line break would break the row, a double quote its parsing. */
export const iifText = (s: string) => s.replace(/[\t\r\n]+/g, ' ').replaceAll('"', "'");

async function* jsonChunks(entries: AsyncIterable<JournalEntry>, from: string, to: string) {
  yield `{"data":{"from":${JSON.stringify(from)},"to":${JSON.stringify(to)},"entries":[`;
  let first = true;
  for await (const e of entries) {
    const view = {
      id: e.id,
      journalNo: e.journalNo,
      entryDate: e.entryDate,
      sourceType: e.sourceType,
      sourceId: e.sourceId,
      memo: e.memo,
      lines: e.lines.map((l) => ({
        accountCode: l.accountCode,
        accountName: l.accountName,
        debit: Number(money(l.debitCents)),
        credit: Number(money(l.creditCents)),
      })),
    };
    yield (first ? '' : ',') + JSON.stringify(view);
    first = false;
  }
  yield ']}}\n';
}

async function* csvRecords(entries: AsyncIterable<JournalEntry>) {
  for await (const e of entries) {
    for (const l of e.lines) {
      yield [
        e.entryDate,
        e.id,
        `${e.sourceType} ${e.sourceId}`,
        l.accountCode,
        l.accountName,
        blankIfZero(l.debitCents),
        blankIfZero(l.creditCents),
        e.memo,
      ];
    }
  }
}

/** QuickBooks Desktop: one GENERAL JOURNAL block per entry, debits positive, credits negative. */
async function* iifRecords(entries: AsyncIterable<JournalEntry>) {
  yield ['!TRNS', 'TRNSID', 'TRNSTYPE', 'DATE', 'ACCNT', 'AMOUNT', 'DOCNUM', 'MEMO'];
  yield ['!SPL', 'SPLID', 'TRNSTYPE', 'DATE', 'ACCNT', 'AMOUNT', 'DOCNUM', 'MEMO'];
  yield ['!ENDTRNS'];
  for await (const e of entries) {
    for (const [i, l] of e.lines.entries()) {
      yield [
        i === 0 ? 'TRNS' : 'SPL',
        '',
        'GENERAL JOURNAL',
        usDate(e.entryDate),
        iifText(l.externalName),
        money(l.debitCents - l.creditCents),
        e.journalNo,
        iifText(e.memo),
      ];
    }
    yield ['ENDTRNS'];
  }
}

async function* qboRecords(entries: AsyncIterable<JournalEntry>) {
  for await (const e of entries) {
    for (const l of e.lines) {
      yield [
        e.journalNo,
        usDate(e.entryDate),
        l.externalName,
        blankIfZero(l.debitCents),
        blankIfZero(l.creditCents),
        e.memo,
        '',
      ];
    }
  }
}

/** Xero manual journals: the rows of one journal share Narration and Date; debits positive. */
async function* xeroRecords(entries: AsyncIterable<JournalEntry>) {
  for await (const e of entries) {
    for (const l of e.lines) {
      yield [
        `${e.journalNo} ${e.memo}`,
        usDate(e.entryDate),
        e.memo,
        l.externalCode,
        'Tax Exempt',
        money(l.debitCents - l.creditCents),
      ];
    }
  }
}

const HEADERS = {
  csv: ['date', 'entry', 'source', 'accountCode', 'accountName', 'debit', 'credit', 'description'],
  qbo: ['Journal No', 'Journal Date', 'Account Name', 'Debits', 'Credits', 'Description', 'Name'],
  xero: ['Narration', 'Date', 'Description', 'AccountCode', 'TaxRate', 'Amount'],
};

/** Writes the entries in `format` into `out`, honouring its back-pressure; resolves once all is written. */
export async function writeJournal(
  entries: AsyncIterable<JournalEntry>,
  format: JournalFormat,
  range: { from: string; to: string },
  out: Writable,
): Promise<void> {
  switch (format) {
    case 'json':
      return pipeline(Readable.from(jsonChunks(entries, range.from, range.to)), out);
    case 'csv':
      return pipeline(Readable.from(csvRecords(entries)), stringify({ header: true, columns: HEADERS.csv }), out);
    case 'qbo':
      return pipeline(Readable.from(qboRecords(entries)), stringify({ header: true, columns: HEADERS.qbo }), out);
    case 'xero':
      return pipeline(Readable.from(xeroRecords(entries)), stringify({ header: true, columns: HEADERS.xero }), out);
    case 'iif':
      return pipeline(
        Readable.from(iifRecords(entries)),
        stringify({ delimiter: '\t', record_delimiter: 'windows' }),
        out,
      );
  }
}
