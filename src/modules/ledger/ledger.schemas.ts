import { Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';
import { ACCOUNT_TYPES, CHART_OF_ACCOUNTS } from './ledger.accounts.js';
import { JOURNAL_FORMATS } from './ledger.journal-formats.js';

const Code = StringEnum(
  CHART_OF_ACCOUNTS.map((a) => a.code),
  'Account code of the fixed chart',
);

export const Account = Type.Object(
  {
    code: Code,
    name: Type.String(),
    type: StringEnum(ACCOUNT_TYPES),
    normalBalance: StringEnum(['debit', 'credit'] as const, 'The side that increases the account'),
    externalName: Nullable(
      Type.String({ description: 'The account’s name in the accountant’s system (iif, qbo exports); null: ours' }),
    ),
    externalCode: Nullable(Type.String({ description: 'The account’s code there (xero export); null: ours' })),
  },
  { additionalProperties: false },
);

export const AccountParams = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 10, description: 'Account code (1000, 1100, …); another → 404' }) },
  { additionalProperties: false },
);
export const AccountNamesBody = Type.Object(
  {
    externalName: Type.Optional(Nullable(Type.String({ maxLength: 100, description: 'null or "": back to ours' }))),
    externalCode: Type.Optional(Nullable(Type.String({ maxLength: 30, description: 'null or "": back to ours' }))),
  },
  { additionalProperties: false },
);
export const AccountResponse = Envelope(Account);

export const SOURCE_TYPES = ['invoice', 'payment', 'refund', 'bill', 'bill_payment'] as const;

export const Entry = Type.Object(
  {
    id: Type.String({ description: 'jen_…' }),
    entryDate: DateOnly('The day the entry belongs to (organization timezone)'),
    sourceType: Type.String({ description: SOURCE_TYPES.join(' | ') }),
    sourceId: Type.String({ description: 'The id of the invoice, payment, bill or bill payment' }),
    memo: Type.String(),
    lines: Type.Array(
      Type.Object(
        {
          accountCode: Type.String(),
          accountName: Type.String(),
          debit: Type.Number(),
          credit: Type.Number(),
        },
        { additionalProperties: false },
      ),
      { description: 'Debits equal credits in every entry' },
    ),
    createdAt: DateTime(),
  },
  { additionalProperties: false },
);

export const EntryListQuery = Type.Object(
  {
    sourceType: Type.Optional(StringEnum(SOURCE_TYPES)),
    sourceId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    from: Type.Optional(DateOnly('First entryDate included')),
    to: Type.Optional(DateOnly('Last entryDate included')),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const TrialBalanceQuery = Type.Object(
  { asOf: Type.Optional(DateOnly('Entries dated on or before this day; default today')) },
  { additionalProperties: false },
);

export const TrialBalance = Type.Object(
  {
    asOf: DateOnly(),
    accounts: Type.Array(
      Type.Object(
        {
          code: Type.String(),
          name: Type.String(),
          type: StringEnum(ACCOUNT_TYPES),
          debit: Type.Number({ description: 'Sum of debits' }),
          credit: Type.Number({ description: 'Sum of credits' }),
          balance: Type.Number({
            description: 'On the account’s normal side (debit − credit for assets and expenses)',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    totalDebit: Type.Number(),
    totalCredit: Type.Number(),
    balanced: Type.Boolean({ description: 'totalDebit = totalCredit (always true)' }),
  },
  { additionalProperties: false },
);

export const AccountList = Envelope(Type.Array(Account));
export const EntryList = Envelope(Type.Array(Entry));
export const TrialBalanceResponse = Envelope(TrialBalance);

export const PeriodClose = Type.Object(
  {
    closedThrough: Nullable(
      DateOnly('No ledger line is dated on or before this day (organization timezone); null: nothing is closed'),
    ),
  },
  { additionalProperties: false },
);
export const PeriodCloseResponse = Envelope(PeriodClose);
export const CloseBody = Type.Object(
  { through: DateOnly('Close the books through this day: not after today, not before the current closed date') },
  { additionalProperties: false },
);
export const ReopenBody = Type.Object(
  {
    through: Nullable(DateOnly('Earlier than the current closed date; null reopens everything')),
  },
  { additionalProperties: false },
);

export const JournalQuery = Type.Object(
  {
    from: DateOnly('First entryDate included'),
    to: DateOnly('Last entryDate included; not before from'),
    format: Type.Optional(StringEnum(JOURNAL_FORMATS, 'Default json')),
  },
  { additionalProperties: false },
);

/** The json format's body (the others are CSV or IIF text: see the route's description). */
export const JournalJson = Type.Object(
  {
    data: Type.Object(
      {
        from: DateOnly(),
        to: DateOnly(),
        entries: Type.Array(
          Type.Object(
            {
              id: Type.String(),
              journalNo: Type.String({ description: 'YYYYMMDD-NNNN: the entry’s rank within its day' }),
              entryDate: DateOnly(),
              sourceType: Type.String(),
              sourceId: Type.String(),
              memo: Type.String(),
              lines: Entry.properties.lines,
            },
            { additionalProperties: false },
          ),
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** 200 of the journal: JSON in the json format, CSV or IIF text in the others. */
export const JournalResponse = {
  description: 'The journal: json {data: {from, to, entries}}, or csv/qbo/xero (text/csv) or iif (text/plain)',
  content: {
    'application/json': { schema: JournalJson },
    'text/csv': { schema: { type: 'string' } },
    'text/plain': { schema: { type: 'string' } },
  },
};
