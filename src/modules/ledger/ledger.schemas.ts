import { Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateOnly, DateTime, Envelope, PageQuery } from '../../platform/schemas.js';
import { ACCOUNT_TYPES, CHART_OF_ACCOUNTS } from './ledger.accounts.js';

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
  },
  { additionalProperties: false },
);

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
