import { and, asc, eq } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/client.js';
import { invoices, jobSchedules } from '../../src/db/schema/index.js';
import { billSchedules } from '../../src/flows/bill-schedules.js';
import { today as todayIn } from '../../src/platform/dates.js';
import { createCustomer, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * The schedule-billing worker runs every quarter hour; on almost every pass nothing is due.
 * Such a pass must cost the same few statements whether there are two installment schedules
 * or a thousand: each schedule records its next installment date, and the pass selects only
 * the schedules with one due, across organizations, in one query.
 */

const TZ = 'America/Chicago';

/** Sync and Query messages in a batch of frontend protocol messages (type byte, then an int32 length that counts itself). */
function statementsIn(batch: Uint8Array): number {
  const SYNC = 0x53; // 'S': ends an extended-protocol statement
  const QUERY = 0x51; // 'Q': a simple-protocol call (BEGIN, COMMIT, settings, exec)
  const view = new DataView(batch.buffer, batch.byteOffset, batch.byteLength);
  let count = 0;
  for (let at = 0; at + 5 <= batch.length; at += 1 + view.getInt32(at + 1)) {
    if (batch[at] === SYNC || batch[at] === QUERY) count += 1;
  }
  return count;
}

/**
 * Every statement the process sends to the database while `fn` runs, counted at the driver:
 * on PostgreSQL each pg client query (a round trip: `BEGIN; SELECT set_config…` counts one);
 * on PGlite each Sync or Query message in the batches the app's client hands the engine
 * (src/db/pglite-client.ts sends a statement, with BEGIN and the settings before the first,
 * as one batch).
 */
async function countStatements<T>(
  database: Database,
  fn: () => Promise<T>,
): Promise<{ result: T; statements: number }> {
  let statements = 0;
  const pglite = database.pglite;
  if (pglite) {
    const original = pglite.execProtocolRawStream;
    pglite.execProtocolRawStream = function (this: typeof pglite, message, options) {
      statements += statementsIn(message);
      return original.call(this, message, options);
    };
    try {
      return { result: await fn(), statements };
    } finally {
      pglite.execProtocolRawStream = original;
    }
  }
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    statements += 1;
    return original.apply(this, args);
  };
  try {
    return { result: await fn(), statements };
  } finally {
    proto.query = original;
  }
}

describe('schedule billing: the pass when nothing is due', () => {
  let h: Harness;
  let owner: TestUser;
  let other: TestUser;
  const deps = () => ({ baseUrl: h.config.baseUrl });
  const pass = (at: string) => billSchedules(h.database.db, deps(), new Date(at));

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: TZ });
    other = await newTenant(h, { name: 'Other Co', timezone: TZ });
  });
  afterAll(async () => h?.close());

  async function installmentSchedule(user: TestUser, billing: object) {
    const customerId = (await createCustomer(h, user)).id;
    const res = await user.call('POST', '/api/jobs/schedules', {
      customerId,
      title: 'Lawn care 2027',
      rrule: 'FREQ=MONTHLY;COUNT=2',
      startDate: todayIn(TZ),
      lineItems: [line('Season', 1, 100)],
      billing,
    });
    expect(res.statusCode, res.body).toBe(201);
    return { id: res.json().data.id as string, customerId };
  }
  const threeIn2027 = {
    mode: 'installments',
    amounts: [100, 100, 100],
    count: 3,
    firstDate: '2027-01-15',
    every: 'month',
  };

  const invoiceDates = async (user: TestUser, customerId: string) =>
    (
      await h.admin.db
        .select({ d: invoices.invoiceDate })
        .from(invoices)
        .where(and(eq(invoices.organizationId, user.organizationId), eq(invoices.customerId, customerId)))
        .orderBy(asc(invoices.invoiceDate))
    ).map((r) => r.d);

  it('sends the same few statements for 2 installment schedules as for 12 in two organizations', async () => {
    for (let i = 0; i < 2; i++) await installmentSchedule(owner, threeIn2027);
    // January's and February's installments of both.
    expect(await pass('2027-02-20T12:00:00Z')).toBe(4);
    const few = await countStatements(h.database, () => pass('2027-02-21T12:00:00Z'));
    expect(few.result).toBe(0);
    // Two cross-organization queries, each in its own platform transaction.
    expect(few.statements).toBeGreaterThan(0);
    expect(few.statements).toBeLessThanOrEqual(8);

    for (let i = 0; i < 5; i++) {
      await installmentSchedule(owner, threeIn2027);
      await installmentSchedule(other, threeIn2027);
    }
    expect(await pass('2027-02-20T12:00:00Z')).toBe(20);
    const many = await countStatements(h.database, () => pass('2027-02-21T12:00:00Z'));
    expect(many).toEqual({ result: 0, statements: few.statements });

    // March's installment of each, once; after the last, the schedules are never selected again.
    expect(await pass('2027-03-15T12:00:00Z')).toBe(12);
    expect(await pass('2027-03-16T12:00:00Z')).toBe(0);
    const done = await countStatements(h.database, () => pass('2028-03-16T12:00:00Z'));
    expect(done).toEqual({ result: 0, statements: few.statements });
  });

  it('a paused schedule bills nothing, resumed it catches up; a new plan after the last installment bills the rest', async () => {
    const s = await installmentSchedule(owner, threeIn2027);
    expect(await pass('2027-01-20T12:00:00Z')).toBe(1);
    expect((await owner.call('POST', `/api/jobs/schedules/${s.id}/pause`)).statusCode).toBe(200);
    expect(await pass('2027-03-20T12:00:00Z')).toBe(0);
    expect(await invoiceDates(owner, s.customerId)).toEqual(['2027-01-15']);

    expect((await owner.call('POST', `/api/jobs/schedules/${s.id}/resume`)).statusCode).toBe(200);
    expect(await pass('2027-03-20T12:00:00Z')).toBe(2);
    expect(await invoiceDates(owner, s.customerId)).toEqual(['2027-01-15', '2027-02-15', '2027-03-15']);
    const [finished] = await h.admin.db.select().from(jobSchedules).where(eq(jobSchedules.id, s.id));
    expect(finished?.nextInstallmentDate).toBe('infinity');

    // Six installments instead of three: the edit resets the date, the next pass makes 4 and 5 (not 1–3 again).
    const edited = await owner.call('PATCH', `/api/jobs/schedules/${s.id}`, {
      billing: { ...threeIn2027, amounts: [100, 100, 100, 100, 100, 100], count: 6 },
    });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(await pass('2027-05-20T12:00:00Z')).toBe(2);
    expect(await invoiceDates(owner, s.customerId)).toEqual([
      '2027-01-15',
      '2027-02-15',
      '2027-03-15',
      '2027-04-15',
      '2027-05-15',
    ]);
    const [row] = await h.admin.db.select().from(jobSchedules).where(eq(jobSchedules.id, s.id));
    expect(row?.nextInstallmentDate).toBe('2027-06-15');
  });
});
