import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { AccountList, EntryList, EntryListQuery, TrialBalanceQuery, TrialBalanceResponse } from './ledger.schemas.js';
import { listAccounts, listEntries, trialBalance } from './ledger.service.js';

const roles = ['owner', 'admin'] as const;

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
        summary: 'The fixed chart of accounts',
        description:
          'Owner/admin only. The accounts (1000 Cash, 1100 Accounts Receivable, 2000 Accounts Payable and so on) are fixed and cannot be changed through the API.',
        response: { 200: AccountList },
      },
    },
    async () => ({ data: listAccounts() }),
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
}
