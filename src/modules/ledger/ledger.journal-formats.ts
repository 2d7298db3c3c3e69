import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify/sync';
import type { JournalAccount, JournalRow } from './ledger.journal.js';

/*
 * The journal's five formats (operations.md §11). Each is written from the rows as they stream
 * in, one string per fetched batch (bench/parts/ledger-journal.ts: per-row streams, objects and
 * writes cost three times what the database does). What is the same on many lines is formatted
 * once: an account's fields once per export, an entry's (date, journal number, memo) once per
 * entry. Quoting stays csv-stringify's: a field goes through it when it holds a character that
 * makes csv-stringify quote (quote, delimiter, line break), and is written as it is otherwise,
 * which is exactly what csv-stringify writes for it (test/purchasing/ledger-journal.test.ts
 * pins every format's bytes). Amounts are written from integer cents with two decimals, never
 * through floating point. json and csv carry our account codes and names; iif, qbo and xero,
 * which another system imports, carry the account's external name and code (ours when none is set).
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

const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));

/** Integer cents as a decimal string (`-12.05`), exactly. */
export function money(cents: number): string {
  const abs = cents < 0 ? -cents : cents;
  return `${cents < 0 ? '-' : ''}${Math.floor(abs / 100)}.${TWO_DIGITS[abs % 100]}`;
}

/**
 * Integer cents as the JSON number `Number(money(cents))` serialises to (`80.4`, `1`, `0.05`):
 * built from the digits while the decimal has at most 15 significant digits (then the double
 * nearest it prints back as that decimal), else through the double itself.
 */
function jsonAmount(cents: number): string {
  if (cents < 0 || cents >= 1e15) return String(cents / 100);
  const rest = cents % 100;
  const whole = (cents - rest) / 100;
  return rest === 0 ? String(whole) : rest % 10 === 0 ? `${whole}.${rest / 10}` : `${whole}.${TWO_DIGITS[rest]}`;
}

const blankIfZero = (cents: number) => (cents === 0 ? '' : money(cents));
/** `YYYY-MM-DD` → `MM/DD/YYYY`, the date form QuickBooks and Xero (US) import. */
const usDate = (d: string) => `${d.slice(5, 7)}/${d.slice(8, 10)}/${d.slice(0, 4)}`;
/** IIF has no quoting: a tab or line break would break the row, a double quote its parsing. */
export const iifText = (s: string) => s.replace(/[\t\r\n]+/g, ' ').replaceAll('"', "'");

/** One field as csv-stringify writes it with `options`; `special` matches what makes it quote. */
function fieldWriter(options: { delimiter: string; record_delimiter: 'unix' | 'windows' }, special: RegExp) {
  const eol = options.record_delimiter === 'windows' ? '\r\n' : '\n';
  return (value: string): string => (special.test(value) ? stringify([[value]], options).slice(0, -eol.length) : value);
}
const csvField = fieldWriter({ delimiter: ',', record_delimiter: 'unix' }, /[",\r\n]/);
const iifField = fieldWriter({ delimiter: '\t', record_delimiter: 'windows' }, /[\t"\r\n]/);

const HEADERS = {
  csv: ['date', 'entry', 'source', 'accountCode', 'accountName', 'debit', 'credit', 'description'],
  qbo: ['Journal No', 'Journal Date', 'Account Name', 'Debits', 'Credits', 'Description', 'Name'],
  xero: ['Narration', 'Date', 'Description', 'AccountCode', 'TaxRate', 'Amount'],
};
const IIF_HEADER = stringify(
  [
    ['!TRNS', 'TRNSID', 'TRNSTYPE', 'DATE', 'ACCNT', 'AMOUNT', 'DOCNUM', 'MEMO'],
    ['!SPL', 'SPLID', 'TRNSTYPE', 'DATE', 'ACCNT', 'AMOUNT', 'DOCNUM', 'MEMO'],
    ['!ENDTRNS'],
  ],
  { delimiter: '\t', record_delimiter: 'windows' },
);

/** The fields of the entry a row belongs to, with its journal number. */
interface Entry {
  id: string;
  date: string;
  journalNo: string;
  sourceType: string;
  sourceId: string;
  memo: string;
}

/**
 * A format as a writer of lines: `entry` turns an entry into what its lines share (computed
 * once per entry), `line` writes one line, `close` ends an entry, `head`/`tail` frame the whole.
 */
interface Writer<E> {
  head: string;
  entry(e: Entry): E;
  line(shared: E, account: JournalAccount, debitCents: number, creditCents: number, index: number): string;
  close(shared: E): string;
  tail: string;
}

/** Strings computed once per account (per export), keyed by the account object the reader shares. */
function perAccount(text: (a: JournalAccount) => string) {
  const cache = new Map<JournalAccount, string>();
  return (a: JournalAccount) => {
    let s = cache.get(a);
    if (s === undefined) {
      s = text(a);
      cache.set(a, s);
    }
    return s;
  };
}

function jsonWriter(range: { from: string; to: string }): Writer<string> {
  const account = perAccount(
    (a) => `{"accountCode":${JSON.stringify(a.code)},"accountName":${JSON.stringify(a.name)},"debit":`,
  );
  let first = true;
  return {
    head: `{"data":{"from":${JSON.stringify(range.from)},"to":${JSON.stringify(range.to)},"entries":[`,
    entry: (e) => {
      const open = `${first ? '' : ','}{"id":${JSON.stringify(e.id)},"journalNo":${JSON.stringify(e.journalNo)},"entryDate":${JSON.stringify(e.date)},"sourceType":${JSON.stringify(e.sourceType)},"sourceId":${JSON.stringify(e.sourceId)},"memo":${JSON.stringify(e.memo)},"lines":[`;
      first = false;
      return open;
    },
    line: (open, a, debit, credit, index) =>
      `${index === 0 ? open : ','}${account(a)}${jsonAmount(debit)},"credit":${jsonAmount(credit)}}`,
    close: () => ']}',
    tail: ']}}\n',
  };
}

function csvWriter(): Writer<{ before: string; after: string }> {
  const account = perAccount((a) => `${csvField(a.code)},${csvField(a.name)},`);
  return {
    head: stringify([HEADERS.csv]),
    entry: (e) => ({
      before: `${csvField(e.date)},${csvField(e.id)},${csvField(`${e.sourceType} ${e.sourceId}`)},`,
      after: `,${csvField(e.memo)}\n`,
    }),
    line: (s, a, debit, credit) => `${s.before}${account(a)}${blankIfZero(debit)},${blankIfZero(credit)}${s.after}`,
    close: () => '',
    tail: '',
  };
}

/** QuickBooks Desktop: one GENERAL JOURNAL block per entry, debits positive, credits negative. */
function iifWriter(): Writer<{ before: string; after: string }> {
  const account = perAccount((a) => `${iifField(iifText(a.externalName))}\t`);
  return {
    head: IIF_HEADER,
    entry: (e) => ({
      before: `\tGENERAL JOURNAL\t${iifField(usDate(e.date))}\t`,
      after: `\t${iifField(e.journalNo)}\t${iifField(iifText(e.memo))}\r\n`,
    }),
    line: (s, a, debit, credit, index) =>
      `${index === 0 ? 'TRNS' : 'SPL'}\t${s.before}${account(a)}${money(debit - credit)}${s.after}`,
    close: () => 'ENDTRNS\r\n',
    tail: '',
  };
}

function qboWriter(): Writer<{ before: string; after: string }> {
  const account = perAccount((a) => `${csvField(a.externalName)},`);
  return {
    head: stringify([HEADERS.qbo]),
    entry: (e) => ({
      before: `${csvField(e.journalNo)},${csvField(usDate(e.date))},`,
      after: `,${csvField(e.memo)},\n`,
    }),
    line: (s, a, debit, credit) => `${s.before}${account(a)}${blankIfZero(debit)},${blankIfZero(credit)}${s.after}`,
    close: () => '',
    tail: '',
  };
}

/** Xero manual journals: the rows of one journal share Narration and Date; debits positive. */
function xeroWriter(): Writer<string> {
  const account = perAccount((a) => `${csvField(a.externalCode)},Tax Exempt,`);
  return {
    head: stringify([HEADERS.xero]),
    entry: (e) => `${csvField(`${e.journalNo} ${e.memo}`)},${csvField(usDate(e.date))},${csvField(e.memo)},`,
    line: (before, a, debit, credit) => `${before}${account(a)}${money(debit - credit)}\n`,
    close: () => '',
    tail: '',
  };
}

function writerOf(format: JournalFormat, range: { from: string; to: string }): Writer<unknown> {
  switch (format) {
    case 'json':
      return jsonWriter(range) as Writer<unknown>;
    case 'csv':
      return csvWriter() as Writer<unknown>;
    case 'iif':
      return iifWriter() as Writer<unknown>;
    case 'qbo':
      return qboWriter() as Writer<unknown>;
    case 'xero':
      return xeroWriter() as Writer<unknown>;
  }
}

/** The export as one string per batch of rows, framed by the format's head and tail. */
async function* journalText(batches: AsyncIterable<JournalRow[]>, w: Writer<unknown>) {
  yield w.head;
  let entryId: string | undefined;
  let shared: unknown;
  let index = 0;
  // The entry's rank within its day, as the rows come (by date, then id): the range covers whole
  // days, so it counts every entry of the day and a closed day's numbers never change.
  let day = '';
  let rank = 0;
  for await (const rows of batches) {
    let out = '';
    for (const [id, date, sourceType, sourceId, memo, account, debit, credit] of rows) {
      if (id !== entryId) {
        if (entryId !== undefined) out += w.close(shared);
        entryId = id;
        index = 0;
        rank = date === day ? rank + 1 : 1;
        day = date;
        const journalNo = `${date.replaceAll('-', '')}-${String(rank).padStart(4, '0')}`;
        shared = w.entry({ id, date, journalNo, sourceType, sourceId, memo });
      }
      out += w.line(shared, account, debit, credit, index++);
    }
    yield out;
  }
  yield (entryId !== undefined ? w.close(shared) : '') + w.tail;
}

/** Writes the rows in `format` into `out`, honouring its back-pressure; resolves once all is written. */
export async function writeJournal(
  batches: AsyncIterable<JournalRow[]>,
  format: JournalFormat,
  range: { from: string; to: string },
  out: Writable,
): Promise<void> {
  // Byte mode: the readable holds at most one batch's text ahead of the response, not 16.
  return pipeline(Readable.from(journalText(batches, writerOf(format, range)), { objectMode: false }), out);
}
