import { performance } from 'node:perf_hooks';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, rowsOf } from '../../src/db/client.js';
import { customers, jobSchedules } from '../../src/db/schema/index.js';
import { extendScheduleHorizons } from '../../src/modules/jobs/schedules/schedules.tasks.js';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { newId } from '../../src/platform/ids.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

/*
 * Issue 27 on PostgreSQL. (1) The horizon worker expands 1,000 weekly schedules of one
 * organization for the default 56-day horizon (≈ 8,000 visits, each with its activity
 * row and job.created event), as a ratio to inserting the same job rows with one
 * INSERT … SELECT (goal ≥ 0.25). (2) The daily pass over 10,000 schedules that were
 * current yesterday (each reaches one more day today): the statements it sends are
 * counted at the driver (every pg.Client query), per batch of the worker, for 1,000 and
 * for 10,000 schedules: the goal is the same few statements per batch whatever the
 * number of schedules, and one statement when nothing is due.
 */

const TZ = 'America/Chicago';
const EXPAND = 1000;
const DAILY = 10_000;
const HORIZON = 56;
const BYDAY = ['MO', 'TU', 'WE', 'TH', 'FR', 'SA', 'SU'];
/** The worker's batch (schedules.tasks.ts BATCH): the pass is measured in these. */
const BATCH = 500;
const ROUNDS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** Counts every statement the process sends to PostgreSQL while `fn` runs. */
async function countStatements<T>(fn: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  let statements = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    statements += 1;
    return original.apply(this, args);
  };
  try {
    const result = await fn();
    return { result, statements };
  } finally {
    proto.query = original;
  }
}

/** A statement as the database owner, across organizations (bench set-up only). */
async function adminStatement(url: string, text: string, values: unknown[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

export const schedulesBench: BenchPart = {
  name: 'schedules',
  async run() {
    const db = await createBenchDatabase('schedules');
    const database = await openDatabase({ databaseUrl: db.url, poolMax: 4 });
    const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '10000000', DATA_DIR: 'memory://' });
    const app = await buildApp(config, database);
    const admin = (text: string, values: unknown[]) => adminStatement(db.url, text, values);
    try {
      const newOrganization = async (name: string) => {
        const signUp = await app.inject({
          method: 'POST',
          url: '/api/auth/sign-up/email',
          payload: { name, email: `bench-${name.toLowerCase()}@example.com`, password: 'correct horse battery' },
        });
        const cookie = String(signUp.headers['set-cookie']).split(';')[0] as string;
        const org = await app.inject({
          method: 'POST',
          url: '/api/organizations',
          headers: { cookie },
          payload: { name, timezone: TZ },
        });
        return org.json().data.id as string;
      };
      const actor = { kind: 'system' as const, id: 'bench', role: 'owner' as const };
      const now = new Date();
      const today = todayIn(TZ, now);
      /** `n` weekly schedules (weekdays spread evenly), one customer each, 08:00, one priced line, no checklist. */
      const seed = (organizationId: string, n: number, generatedThrough: string | null, status = 'active') =>
        inTenant(database.db, organizationId, actor, async (ctx) => {
          for (let i = 0; i < n; i += 1000) {
            const ids = Array.from({ length: Math.min(1000, n - i) }, () => newId('cus'));
            await ctx.tx
              .insert(customers)
              .values(ids.map((id, k) => ({ id, organizationId, firstName: `Customer ${i + k}` })));
            await ctx.tx.insert(jobSchedules).values(
              ids.map((customerId, k) => ({
                id: newId('sch'),
                organizationId,
                customerId,
                title: 'Weekly mowing',
                rrule: `FREQ=WEEKLY;BYDAY=${BYDAY[(i + k) % 7]}`,
                startDate: today,
                startTime: '08:00',
                durationMinutes: 45,
                lineItems: [
                  {
                    serviceId: null,
                    description: 'Weekly mowing',
                    quantity: 1,
                    unitPriceCents: 4500,
                    taxable: true,
                    amountCents: 4500,
                  },
                ],
                checklist: [] as string[],
                billing: { mode: 'none' as const },
                status,
                generatedThrough,
              })),
            );
          }
        });

      // (1) Expansion, in ROUNDS rounds (medians, the machine being shared): each round the
      // baseline into a copy of the schedules the worker ignores (paused), then the worker.
      const baselineRuns: number[] = [];
      const expandRuns: number[] = [];
      let visits = 0;
      let expanded = 0;
      for (let round = 0; round < ROUNDS; round += 1) {
        const baselineOrg = await newOrganization(`Baseline${round}`);
        await seed(baselineOrg, EXPAND, null, 'paused');
        const baselineStarted = performance.now();
        // In the organization's transaction, as the worker's statement runs (row-level security applies).
        const inserted = await inTenant(database.db, baselineOrg, actor, async (ctx) =>
          rowsOf<{ n: number }>(
            await ctx.tx.execute(sql`
            WITH ins AS (
              INSERT INTO jobs (id, organization_id, status, scheduled_date, schedule_id, occurrence_date, created_at,
                                updated_at, customer_id, property_id, assigned_to, services, notes, start_time,
                                starts_at, duration_minutes, crew_id, line_items, total_cents)
              SELECT 'job_' || md5(s.id || d::text), s.organization_id, 'scheduled', d::date, s.id, d::date, now(), now(),
                     s.customer_id, s.property_id, s.assigned_to, ARRAY[s.title], s.notes, s.start_time,
                     (d::date + s.start_time::time) AT TIME ZONE ${TZ}, s.duration_minutes, s.crew_id, s.line_items, 4500
              FROM job_schedules s
              CROSS JOIN generate_series(${today}::date, ${today}::date + ${HORIZON}::int, interval '1 day') d
              WHERE s.organization_id = ${baselineOrg}
                AND substr(to_char(d, 'DY'), 1, 2) = substring(s.rrule from 'BYDAY=(..)')
              RETURNING 1
            )
            SELECT count(*)::int AS n FROM ins`),
          ),
        );
        baselineRuns.push(performance.now() - baselineStarted);

        const expandOrg = await newOrganization(`Expand${round}`);
        await seed(expandOrg, EXPAND, null);
        const expandStarted = performance.now();
        expanded = 0;
        for (let handled = 1; handled > 0; expanded += handled)
          handled = await extendScheduleHorizons(database.db, now);
        expandRuns.push(performance.now() - expandStarted);
        const [made] = await inTenant(database.db, expandOrg, actor, async (ctx) =>
          rowsOf<{ n: number }>(await ctx.tx.execute(sql`SELECT count(*)::int AS n FROM jobs`)),
        );
        if (made?.n !== inserted[0]?.n) {
          throw new Error(`the worker made ${made?.n} visits, the INSERT … SELECT ${inserted[0]?.n}`);
        }
        visits = made?.n ?? 0;
      }
      const baselineMs = median(baselineRuns);
      const expandMs = median(expandRuns);

      // (2) The daily pass: schedules that reached yesterday's horizon, run one day later.
      const tomorrow = new Date(now.getTime() + 86_400_000);
      const passes: string[] = [];
      for (const n of [EXPAND, DAILY]) {
        const org = await newOrganization(`Daily${n}`);
        await seed(org, n, addDays(today, HORIZON));
        // Only this organization is due: the expansion's schedules are moved out of the way.
        await admin(`UPDATE job_schedules SET generated_through = $1 WHERE organization_id <> $2`, [
          addDays(today, HORIZON + 2),
          org,
        ]);
        let batches = 0;
        const started = performance.now();
        const { statements } = await countStatements(async () => {
          for (let handled = 1; handled > 0; ) {
            handled = await extendScheduleHorizons(database.db, tomorrow);
            if (handled > 0) batches += 1;
          }
        });
        const ms = performance.now() - started;
        const idle = await countStatements(() => extendScheduleHorizons(database.db, tomorrow));
        passes.push(
          `| ${fmt(n)} schedules, one day later | ${batches} | ${fmt(statements)} | ${fmt(statements / batches, 1)} | ${idle.statements} | ${fmt(ms)} ms |`,
        );
        await admin(`UPDATE job_schedules SET status = 'ended' WHERE organization_id = $1`, [org]);
      }
      const r = ratio(baselineMs, expandMs);
      return [
        '## schedules (PostgreSQL)',
        '',
        `Expanding ${fmt(EXPAND)} weekly schedules for a ${HORIZON}-day horizon in one organization (${fmt(visits)} visits, each with its activity row and job.created event; no checklist: each item would add a row per visit), by the horizon worker (batches of ${BATCH}):`,
        '',
        '| Operation | time | ratio (INSERT … SELECT / worker) | goal |',
        '|---|---|---|---|',
        `| extendScheduleHorizons until done (${expanded} schedules; median of ${expandRuns.map((m) => fmt(m)).join(', ')} ms) | ${fmt(expandMs)} ms | ${fmt(r, 2)} | ≥ 0.25 ${r >= 0.25 ? 'met' : 'NOT MET'} |`,
        `| one INSERT … SELECT of the same ${fmt(visits)} job rows (baseline; median of ${baselineRuns.map((m) => fmt(m)).join(', ')} ms) | ${fmt(baselineMs)} ms | 1.00 | |`,
        '',
        'The daily pass, statements counted at the driver (every query a pg client sends, BEGIN/COMMIT included); "idle" is a second pass the same day, when nothing is due:',
        '',
        '| Pass | batches | statements | per batch | idle pass | time |',
        '|---|---|---|---|---|---|',
        ...passes,
      ].join('\n');
    } finally {
      await app.close();
      await database.close();
      await db.drop();
    }
  },
};
