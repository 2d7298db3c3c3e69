import { PassThrough } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { closePeriod, getClose, reopenPeriod } from './ledger.close.js';
import { checkRange, journalRows } from './ledger.journal.js';
import { JOURNAL_MEDIA, writeJournal } from './ledger.journal-formats.js';
import { listAccounts, setAccountNames } from './ledger.mappings.js';
import {
  AccountList,
  AccountNamesBody,
  AccountParams,
  AccountResponse,
  CloseBody,
  EntryList,
  EntryListQuery,
  JournalQuery,
  JournalResponse,
  PeriodCloseResponse,
  ReopenBody,
  TrialBalanceQuery,
  TrialBalanceResponse,
} from './ledger.schemas.js';
import { listEntries, trialBalance } from './ledger.service.js';

const roles = ['owner', 'admin'] as const;
/** Reopening undoes what the accountant signed off: the owner alone may. */
const ownerOnly = ['owner'] as const;

/** The ledger is read-only through the API: entries come only from the changes that cause them. */
export default async function ledgerRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['ledger'];

  app.get(
    '/api/ledger/accounts',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'The fixed chart of accounts, with each account’s name and code in the accountant’s system',
        description:
          'Owner/admin only. The accounts (1000 Cash, 1100 Accounts Receivable, 2000 Accounts Payable and so on) are fixed; only their externalName and externalCode, used by the journal export, can be set.',
        response: { 200: AccountList },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, (ctx) => listAccounts(ctx)) }),
  );

  app.patch(
    '/api/ledger/accounts/:code',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Set the name and code an account carries in QuickBooks or Xero (journal export)',
        description:
          'Owner/admin only. externalName is written as the account in the iif and qbo formats, externalCode in the xero format; null or "" goes back to ours; an absent field stays. Unknown code → 404.',
        params: AccountParams,
        body: AccountNamesBody,
        response: { 200: AccountResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) =>
        setAccountNames(ctx, request.params.code, request.body),
      ),
    }),
  );

  app.get(
    '/api/ledger/journal',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'The journal over a range of days, streamed as json, csv, iif, qbo or xero',
        description:
          'Owner/admin only. Entries dated from..to (inclusive), oldest first. json (default): {data: {from, to, entries}}; csv: date, entry, source, accountCode, accountName, debit, credit, description, one row per line; iif: QuickBooks Desktop GENERAL JOURNAL blocks (!TRNS/!SPL/!ENDTRNS, MM/DD/YYYY, debits positive, credits negative); qbo: QuickBooks Online journal import CSV (Journal No, Journal Date, Account Name, Debits, Credits, Description, Name); xero: manual journal CSV (Narration, Date, Description, AccountCode, TaxRate, Amount, debits positive). iif, qbo and xero name accounts by their externalName/externalCode (PATCH /api/ledger/accounts/{code}). Every format balances and, per account, agrees with the trial balance’s movement over the range. to before from → 400; an unknown format → 400.',
        querystring: JournalQuery,
        produces: ['application/json', 'text/csv', 'text/plain'],
        response: { 200: JournalResponse },
      },
    },
    async (request, reply) => {
      const { from, to, format = 'json' } = request.query;
      checkRange(from, to);
      const body = new PassThrough();
      // The rows stream out of one transaction (a cursor); the response is written as they come.
      inRequestTenant(database.db, request, (ctx) =>
        writeJournal(journalRows(ctx, from, to), format, { from, to }, body),
      ).catch((err: unknown) => {
        request.log.error({ err }, 'journal export failed mid-stream');
        body.destroy(err as Error);
      });
      const media = JOURNAL_MEDIA[format];
      return reply
        .type(media.type)
        .header(
          'Content-Disposition',
          `attachment; filename="journal-${from}-${to}${format === 'qbo' || format === 'xero' ? `-${format}` : ''}.${media.ext}"`,
        )
        .send(body);
    },
  );

  app.get(
    '/api/ledger/entries',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Journal entries with their lines, newest first (filters: sourceType, sourceId, from/to on entryDate)',
        description:
          'Owner/admin only; paginated like every list. Entries come only from the changes that cause them (invoices, payments, bills, bill payments) and are never edited: corrections are reversals. to before from → 400.',
        querystring: EntryListQuery,
        response: { 200: EntryList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listEntries(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/ledger/trial-balance',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Debits, credits and balance per account as of a day; totals always balance',
        description:
          'Owner/admin only. Covers entries dated on or before asOf (default today); debits always equal credits.',
        querystring: TrialBalanceQuery,
        response: { 200: TrialBalanceResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => trialBalance(ctx, request.query.asOf)),
    }),
  );

  app.get(
    '/api/ledger/close',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'The day the books are closed through (null: nothing closed)',
        description: 'Owner/admin only. No ledger line is ever dated on or before closedThrough.',
        response: { 200: PeriodCloseResponse },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, (ctx) => getClose(ctx)) }),
  );

  app.post(
    '/api/ledger/close',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Close the books through a day (emits ledger.period_closed)',
        description:
          'Owner/admin only. through not after today (organization timezone) and not before the current closed date → else 400. Afterwards anything that would post on or before it (a payment, bill, bill payment or deposit dated there; an invoice or bill dated there leaving draft) → 409 PERIOD_CLOSED naming the date field, nothing written; voids, refunds and write-offs of old documents post today. Closing through the current date again changes nothing.',
        body: CloseBody,
        response: { 200: PeriodCloseResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => closePeriod(ctx, request.body.through)),
    }),
  );

  app.post(
    '/api/ledger/reopen',
    {
      config: { roles: ownerOnly },
      schema: {
        tags,
        summary: 'Move the closed date back, or reopen everything (null)',
        description:
          'Owner only. through earlier than the current closed date, or null → else 400; nothing closed → 409 INVALID_STATE.',
        body: ReopenBody,
        response: { 200: PeriodCloseResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => reopenPeriod(ctx, request.body.through)),
    }),
  );
}
