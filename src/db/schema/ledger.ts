import { date, foreignKey, index, integer, pgTable, primaryKey, text, unique } from 'drizzle-orm/pg-core';
import { cents } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';

/*
 * The double-entry ledger (operations.md §3). Entries are only ever inserted:
 * a correction is a new entry that reverses an earlier one. The chart of accounts
 * is fixed and lives in code (modules/ledger/ledger.accounts.ts), so lines carry
 * the account code itself.
 */

export const ledgerEntries = pgTable(
  'ledger_entries',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    /** The calendar date the entry belongs to (trial balance asOf compares it). */
    entryDate: date('entry_date', { mode: 'string' }).notNull(),
    /** invoice | payment | bill | bill_payment | refund … : what caused the entry. */
    sourceType: text('source_type').notNull(),
    sourceId: text('source_id').notNull(),
    memo: text('memo').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'ledger_entries_pkey', columns: [t.organizationId, t.id] }),
    index('ledger_entries_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('ledger_entries_org_source_idx').on(t.organizationId, t.sourceType, t.sourceId),
    index('ledger_entries_org_date_idx').on(t.organizationId, t.entryDate),
  ],
);

export const ledgerLines = pgTable(
  'ledger_lines',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    entryId: text('entry_id').notNull(),
    position: integer('position').notNull(),
    accountCode: text('account_code').notNull(),
    debitCents: cents('debit_cents').notNull().default(0),
    creditCents: cents('credit_cents').notNull().default(0),
  },
  (t) => [
    primaryKey({ name: 'ledger_lines_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'ledger_lines_entry_id_fk',
      columns: [t.organizationId, t.entryId],
      foreignColumns: [ledgerEntries.organizationId, ledgerEntries.id],
    }).onDelete('cascade'),
    index('ledger_lines_org_entry_idx').on(t.organizationId, t.entryId, t.position),
    index('ledger_lines_org_account_idx').on(t.organizationId, t.accountCode),
  ],
);

/**
 * The day an organization's books are closed through (operations.md §11), one row per
 * organization, created on first need by `ledger_close_lock` (drizzle/0041_ledger_close.sql).
 * Postings lock it FOR SHARE and refuse an entry dated on or before `closedThrough`, a close or
 * reopen locks it FOR UPDATE (no trigger: drizzle/0047).
 */
export const ledgerCloses = pgTable(
  'ledger_closes',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    closedThrough: date('closed_through', { mode: 'string' }),
    /** The user who last closed or reopened. */
    updatedBy: text('updated_by'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'ledger_closes_pkey', columns: [t.organizationId, t.id] }),
    unique('ledger_closes_org_unique').on(t.organizationId),
  ],
);

/** An account's name and code in the accountant's system; no row = ours. */
export const ledgerAccountMappings = pgTable(
  'ledger_account_mappings',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    accountCode: text('account_code').notNull(),
    externalName: text('external_name'),
    externalCode: text('external_code'),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'ledger_account_mappings_pkey', columns: [t.organizationId, t.id] }),
    unique('ledger_account_mappings_org_code_unique').on(t.organizationId, t.accountCode),
  ],
);
