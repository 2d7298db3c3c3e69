/**
 * The fixed chart of accounts (operations.md §3). Asset and expense accounts grow
 * with debits, liabilities and revenue with credits; a balance is reported on the
 * account's normal side.
 */
export const ACCOUNT_TYPES = ['asset', 'liability', 'revenue', 'expense'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];

export const CHART_OF_ACCOUNTS = [
  { code: '1000', name: 'Cash', type: 'asset' },
  { code: '1100', name: 'Accounts Receivable', type: 'asset' },
  { code: '2000', name: 'Accounts Payable', type: 'liability' },
  { code: '2100', name: 'Sales Tax Payable', type: 'liability' },
  { code: '2300', name: 'Customer Credits', type: 'liability' },
  { code: '4000', name: 'Service Revenue', type: 'revenue' },
  { code: '5000', name: 'Materials and Supplies', type: 'expense' },
  { code: '5100', name: 'Equipment and Maintenance', type: 'expense' },
  { code: '5200', name: 'Subcontractors', type: 'expense' },
  { code: '5900', name: 'Other Expenses', type: 'expense' },
  { code: '6900', name: 'Bad Debt', type: 'expense' },
] as const satisfies readonly { code: string; name: string; type: AccountType }[];

export type AccountCode = (typeof CHART_OF_ACCOUNTS)[number]['code'];

/** Named codes, so postings read as bookkeeping rather than numbers. */
export const ACCOUNT = {
  cash: '1000',
  receivable: '1100',
  payable: '2000',
  salesTax: '2100',
  customerCredits: '2300',
  revenue: '4000',
  materials: '5000',
  badDebt: '6900',
} as const satisfies Record<string, AccountCode>;

/** Accounts a vendor bill line may be booked to (default 5000). */
export const BILL_EXPENSE_ACCOUNTS = ['5000', '5100', '5200', '5900'] as const satisfies readonly AccountCode[];

const BY_CODE = new Map<string, (typeof CHART_OF_ACCOUNTS)[number]>(CHART_OF_ACCOUNTS.map((a) => [a.code, a]));

export const accountOf = (code: string) => BY_CODE.get(code);

export const debitNormal = (type: AccountType) => type === 'asset' || type === 'expense';
