import { eq } from 'drizzle-orm';
import { ledgerAccountMappings } from '../../db/schema/index.js';
import { notFound } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { Ctx } from '../../platform/tenancy.js';
import { accountOf, CHART_OF_ACCOUNTS, debitNormal } from './ledger.accounts.js';

/*
 * An account's name and code in the accountant's system (operations.md §11): the journal's
 * iif, qbo and xero formats write these; unset, they are ours.
 */

export interface ExternalNames {
  externalName: string | null;
  externalCode: string | null;
}

export async function accountNames(ctx: Ctx): Promise<Map<string, ExternalNames>> {
  const rows = await ctx.tx
    .select()
    .from(ledgerAccountMappings)
    .where(eq(ledgerAccountMappings.organizationId, ctx.organizationId));
  return new Map(rows.map((r) => [r.accountCode, { externalName: r.externalName, externalCode: r.externalCode }]));
}

/** The account as the API shows it, with the names it carries elsewhere (null: ours). */
export function accountView(code: string, names: ExternalNames | undefined) {
  const a = accountOf(code);
  if (!a) throw notFound('Account');
  return {
    code: a.code,
    name: a.name,
    type: a.type,
    normalBalance: debitNormal(a.type) ? ('debit' as const) : ('credit' as const),
    externalName: names?.externalName ?? null,
    externalCode: names?.externalCode ?? null,
  };
}

/** The fixed chart, each account with its external name and code. */
export async function listAccounts(ctx: Ctx) {
  const names = await accountNames(ctx);
  return CHART_OF_ACCOUNTS.map((a) => accountView(a.code, names.get(a.code)));
}

/** Sets (a string) or clears (null) the external name and code; an absent field stays as it was. */
export async function setAccountNames(
  ctx: Ctx,
  code: string,
  input: { externalName?: string | null | undefined; externalCode?: string | null | undefined },
) {
  if (!accountOf(code)) throw notFound('Account');
  const clean = (v: string | null | undefined) => (v === undefined ? undefined : v === null ? null : v.trim() || null);
  const patch = {
    ...(input.externalName !== undefined ? { externalName: clean(input.externalName) } : {}),
    ...(input.externalCode !== undefined ? { externalCode: clean(input.externalCode) } : {}),
  };
  const [row] = await ctx.tx
    .insert(ledgerAccountMappings)
    .values({ id: newId('lam'), organizationId: ctx.organizationId, accountCode: code, ...patch })
    .onConflictDoUpdate({
      target: [ledgerAccountMappings.organizationId, ledgerAccountMappings.accountCode],
      set: { ...patch, updatedAt: new Date() },
    })
    .returning();
  return accountView(code, row);
}
