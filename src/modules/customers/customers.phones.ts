import { and, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import type { WorkerTask } from '../../background/runner.js';
import type { Database } from '../../db/client.js';
import { rowsOf } from '../../db/client.js';
import { customers } from '../../db/schema/index.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { toE164 } from '../../platform/phones.js';
import { type Ctx, inTenant, systemActor } from '../../platform/tenancy.js';
import { getOrgSettings } from '../settings/settings.service.js';

/*
 * A customer's `phoneE164` is its `phone` read with the organization's `country` (operations.md
 * §10), and `phone_country` says which country it was read with; NULL (with a phone) means "to be
 * read again": the customers made before drizzle/0039 (which have a phone and no phoneE164), every
 * customer once drizzle/0045 added the column, and every customer of an organization whose
 * country changed (the settings change marks them in its own transaction: src/flows/update-settings.ts).
 * The worker (`customers.phones`) and `npm run admin -- backfill-phones` read them in batches;
 * running either again finds nothing left to do.
 *
 * Queued rather than re-read inside the settings change: an organization with 100,000 customers
 * would hold the settings request for every number; the change commits one UPDATE instead, and
 * until the worker passes (seconds) a number keeps the E.164 of the old country.
 *
 * No number is read with a country that is no longer the organization's: every write of a phone
 * (create, edit, the worker) takes a shared transaction-scoped advisory lock on the organization
 * before reading the country, and the country change takes it exclusively before marking. A write
 * that read the old country commits before the marking starts (and is marked); one that waited
 * reads the new country.
 */

const TASK = 'customers.phones';
const ACTOR = systemActor(TASK);
/** Customers read per organization and transaction. */
export const PHONE_BATCH = 500;

const lockKey = (ctx: Ctx) => sql`hashtext(${TASK}), hashtext(${ctx.organizationId})`;

/** Holds the organization's country steady for this transaction's phone writes (shared among them). */
async function lockCountryShared(ctx: Ctx): Promise<void> {
  await ctx.tx.execute(sql`SELECT pg_advisory_xact_lock_shared(${lockKey(ctx)})`);
}

/** `phone` in E.164 with the country it was read with (null phoneE164: not a valid number). */
export async function parsedPhone(
  ctx: Ctx,
  phone: string | null | undefined,
): Promise<{ phoneE164: string | null; phoneCountry: string | null }> {
  if (!phone) return { phoneE164: null, phoneCountry: null };
  await lockCountryShared(ctx);
  const { country } = await getOrgSettings(ctx);
  return { phoneE164: toE164(phone, country), phoneCountry: country };
}

/**
 * The organization's country changed: every customer with a phone is to be read again (one
 * UPDATE, in the settings change's transaction). Answers how many were marked.
 */
export async function markPhonesForReparse(ctx: Ctx): Promise<number> {
  await ctx.tx.execute(sql`SELECT pg_advisory_xact_lock(${lockKey(ctx)})`);
  const marked = await ctx.tx
    .update(customers)
    .set({ phoneCountry: null })
    .where(and(eq(customers.organizationId, ctx.organizationId), isNotNull(customers.phone)))
    .returning({ id: customers.id });
  return marked.length;
}

/**
 * Reads up to `limit` marked phones of this organization with its country and records them.
 * A row whose phone changed meanwhile is left to its own write. Answers how many were read.
 */
export async function reparsePhones(ctx: Ctx, limit = PHONE_BATCH): Promise<number> {
  await lockCountryShared(ctx);
  const { country } = await getOrgSettings(ctx);
  const due = await ctx.tx
    .select({ id: customers.id, phone: customers.phone })
    .from(customers)
    .where(
      and(eq(customers.organizationId, ctx.organizationId), isNotNull(customers.phone), isNull(customers.phoneCountry)),
    )
    .orderBy(customers.id)
    .limit(limit)
    .for('update', { skipLocked: true });
  if (due.length === 0) return 0;
  const rows = due.map((r) => ({ id: r.id, phone: r.phone, e164: toE164(r.phone, country) }));
  // One statement for the batch: the rows travel as one JSON parameter.
  await ctx.tx.execute(sql`
    UPDATE customers c SET phone_e164 = r.e164, phone_country = ${country}
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(id text, phone text, e164 text)
    WHERE c.organization_id = ${ctx.organizationId} AND c.id = r.id AND c.phone = r.phone
      AND c.phone_country IS NULL`);
  return due.length;
}

/** Organizations with phones to read, at most `limit` (the partial index customers_phone_unread_idx). */
async function organizationsToRead(database: Database, limit: number, organizationId?: string): Promise<string[]> {
  return asPlatform(database.db, async (tx) =>
    rowsOf<{ organization_id: string }>(
      await tx.execute(sql`
        SELECT DISTINCT organization_id FROM customers
        WHERE phone IS NOT NULL AND phone_country IS NULL
          ${organizationId ? sql`AND organization_id = ${organizationId}` : sql``}
        LIMIT ${limit}`),
    ).map((r) => r.organization_id),
  );
}

/** One pass: a batch of each organization with phones to read (at most `orgs` organizations). */
export async function readPhonesOnce(database: Database, orgs = 20, organizationId?: string): Promise<number> {
  let read = 0;
  for (const id of await organizationsToRead(database, orgs, organizationId)) {
    read += await inTenant(database.db, id, ACTOR, (ctx) => reparsePhones(ctx));
  }
  return read;
}

/**
 * `npm run admin -- backfill-phones [organizationId]`: reads every marked phone (all
 * organizations, or one), batch after batch, until none is left; `progress` hears each pass.
 */
export async function backfillPhones(
  database: Database,
  organizationId?: string,
  progress: (read: number) => void = () => {},
): Promise<number> {
  let total = 0;
  for (;;) {
    const read = await readPhonesOnce(database, 100, organizationId);
    if (read === 0) return total;
    total += read;
    progress(total);
  }
}

export const readPhonesTask: WorkerTask = {
  name: TASK,
  intervalMs: 5_000,
  run: (t) => readPhonesOnce(t.database),
};
