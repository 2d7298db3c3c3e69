import { DUPLICATE_NAME, type JobCalls, notOk, type Result, written } from './quickbooks.calls.js';

/*
 * What an invoice or refund line needs in QuickBooks first: an Item per service of ours (the
 * line's service; a free-text line goes under one "Services" item), and the accounts those are
 * written against. Each is looked up by name in the company first (an Item the accountant made
 * already is used, not doubled), else created once with a stable requestid; what was found is
 * kept in quickbooks_records (entity `item`: our service id or `services`; entity `account`:
 * `income` or `bank`), so the next line asks nothing.
 */

/** A value inside a QuickBooks query's quotes (`\` escapes, as Intuit's query language has it). */
const quoted = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** An Item Name as QuickBooks takes it: no colon (its sub-item separator), tab or newline; 100 characters. */
export function itemName(s: string): string {
  const clean = s
    .replace(/[:\t\r\n]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100);
  return clean || 'Service';
}

type Found = { id: string } | Result;

/** The first row of a query, kept under (entity, key) once found. */
async function lookUp(calls: JobCalls, entity: string, key: string, query: string, name: string) {
  const found = await calls.request('GET', 'query', { query });
  if (found.kind !== 'ok') return notOk(found);
  const rows = (found.body.QueryResponse as Record<string, Array<{ Id: string; SyncToken?: string }>> | undefined)?.[
    name
  ];
  const row = rows?.[0];
  if (!row) return null;
  await calls.remember(entity, key, row.Id, String(row.SyncToken ?? '0'));
  return { id: row.Id };
}

/** An account of the company of a type (`Income`, `Bank`): the first QuickBooks lists. */
async function account(
  calls: JobCalls,
  key: 'income' | 'bank',
  type: 'Income' | 'Bank',
  forWhat: string,
): Promise<Found> {
  const known = await calls.known('account', key);
  if (known) return { id: known.quickbooksId };
  const found = await lookUp(
    calls,
    'account',
    key,
    `select * from Account where AccountType = ${quoted(type)} maxresults 1`,
    'Account',
  );
  if (found) return found;
  return {
    kind: 'fault',
    code: type === 'Income' ? 'NO_INCOME_ACCOUNT' : 'NO_BANK_ACCOUNT',
    message: `The QuickBooks company has no ${type === 'Income' ? 'income' : 'bank'} account for ${forWhat}`,
  };
}

/** The account refunds are paid from (RefundReceipt's DepositToAccountRef): the company's first bank account. */
export const refundAccount = (calls: JobCalls) => account(calls, 'bank', 'Bank', 'refunds to be paid from');

/**
 * The Item of a service of ours (`serviceId`), named after it (`name`: the line's description,
 * which is the service's name unless the line changed it), or, without one, the "Services" item.
 * A name QuickBooks already has for another Item is used as is (the accountant's own); an Item
 * refused for its name at creation (6240: an inactive or other-typed one holds it) gets our id.
 */
export async function itemFor(calls: JobCalls, serviceId: string | null, name: string): Promise<Found> {
  const key = serviceId ?? 'services';
  const known = await calls.known('item', key);
  if (known) return { id: known.quickbooksId };
  const wanted = serviceId ? itemName(name) : 'Services';
  const found = await lookUp(calls, 'item', key, `select * from Item where Name = ${quoted(wanted)}`, 'Item');
  if (found) return found;
  const income = await account(calls, 'income', 'Income', `the Item "${wanted}"`);
  if ('kind' in income) return income;
  const create = (itemName: string, what: string) =>
    calls.request(
      'POST',
      'item',
      { requestid: calls.rid('item', key, what) },
      { Name: itemName, Type: 'Service', IncomeAccountRef: { value: income.id } },
    );
  let made = await create(wanted, 'create');
  if (made.kind === 'fault' && made.code === DUPLICATE_NAME && serviceId)
    made = await create(itemName(`${wanted.slice(0, 60)} (${serviceId})`), 'create-renamed');
  if (made.kind !== 'ok') return notOk(made);
  const w = written(made.body, 'Item');
  if (!w) return { kind: 'retry', message: 'QuickBooks answered without the Item' };
  await calls.remember('item', key, w.Id, w.SyncToken);
  return { id: w.Id };
}
