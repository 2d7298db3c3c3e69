import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { rowsAsArrays } from '../../src/db/values.js';
import { readPhonesOnce } from '../../src/modules/customers/customers.phones.js';
import { claimBillingKeys, recordBillingKeys } from '../../src/modules/invoices/invoices.billing-keys.js';
import { addDays, today as todayIn } from '../../src/platform/dates.js';
import { inTenant, systemActor } from '../../src/platform/tenancy.js';
import { newTenant, TEST_ENV, type TestUser } from '../harness.js';
import { ok200, RETRY_ENV, type Receiver, startReceiver, startWorker, waitFor } from '../webhooks/helpers.js';
import { type Catalog, catalogOf, citusPlan } from './citus-plan.js';

/*
 * The move to Citus for real (docs/scaling.md): a fresh database on every node of the cluster
 * CITUS_DATABASE_URL names (its coordinator; .ci/run starts a local cluster and sets it), migrated through the coordinator with the project's migrator, then the
 * document's ```sql citus block run statement by statement. Every statement Citus refuses is
 * reported with its error; then the catalog must show every tenant table distributed by
 * organization_id in organizations' co-location group and every global table as a reference
 * table, and the API (in process) must run its smoke flow there, the webhook worker included.
 * Without CITUS_DATABASE_URL the file is reported as skipped. CITUS_LOG_LEVEL=error shows the
 * API's own log, where a request Citus refused names the statement and Citus's error.
 */
const CITUS_URL = process.env.CITUS_DATABASE_URL;

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};
const nodeUrl = (base: string, host: string, port: number, database: string) => {
  const u = new URL(base);
  u.hostname = host;
  u.port = String(port);
  u.pathname = `/${database}`;
  return u.toString();
};

async function run(url: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
}

describe.skipIf(!CITUS_URL)('on a Citus cluster (CITUS_DATABASE_URL)', () => {
  const base = CITUS_URL ?? '';
  const name = `crm_citus_${randomBytes(4).toString('hex')}`;
  // The body of a skipped describe still runs while vitest collects it: no URL to parse then.
  const url = CITUS_URL ? withDatabase(base, name) : '';
  const plan = citusPlan();
  const mailFile = join(tmpdir(), `crm-citus-mail-${process.pid}.log`);
  let nodes: Array<{ host: string; port: number }> = [];
  let workers: Array<{ host: string; port: number }> = [];
  /** Each statement of the block Citus refused, with its error. */
  const refused: Array<{ statement: string; error: string }> = [];
  let database: Database | undefined;
  let catalog: Catalog;
  let app: FastifyInstance | undefined;
  let config: Config;

  beforeAll(async () => {
    const coordinator = new URL(base);
    const probe = new pg.Client({ connectionString: base });
    await probe.connect();
    try {
      const { rows } = await probe.query<{ host: string; port: number }>(
        `SELECT nodename AS host, nodeport AS port FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeport`,
      );
      workers = rows;
    } finally {
      await probe.end();
    }
    nodes = [{ host: coordinator.hostname, port: Number(coordinator.port || 5432) }, ...workers];
    // A database of its own on every node, each with the extension (Citus does not create either).
    for (const n of nodes) {
      await run(nodeUrl(base, n.host, n.port, 'postgres'), [`CREATE DATABASE ${name}`]);
      await run(nodeUrl(base, n.host, n.port, name), ['CREATE EXTENSION citus']);
    }
    const { host, port } = nodes[0] as { host: string; port: number };
    await run(url, [`SELECT citus_set_coordinator_host('${host}', ${port})`]);
    // Migrated as the service migrates on plain PostgreSQL: tables are local to the coordinator.
    const owner = await openDatabase({ databaseUrl: url, poolMax: 1 });
    try {
      await migrate(owner);
      catalog = await catalogOf(owner);
    } finally {
      await owner.close();
    }
    // Workers join after the migration, so the roles it created reach them with the node.
    await run(
      url,
      workers.map((w) => `SELECT citus_add_node('${w.host}', ${w.port})`),
    );
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const statement of plan.statements) {
        await client
          .query(statement)
          .catch((err: Error & { detail?: string }) =>
            refused.push({ statement, error: [err.message, err.detail].filter(Boolean).join(' — ') }),
          );
      }
    } finally {
      await client.end();
    }
  }, 600_000);

  afterAll(async () => {
    await app?.close();
    await database?.close();
    rmSync(mailFile, { force: true });
    for (const n of [...nodes].reverse()) {
      await run(nodeUrl(base, n.host, n.port, 'postgres'), [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]).catch(
        () => {},
      );
    }
  }, 120_000);

  it("accepts every statement of docs/scaling.md's block", () => {
    const report = refused.map((r) => `${r.statement}\n    → ${r.error}`).join('\n');
    expect(refused, `Citus refused ${refused.length} of ${plan.statements.length} statements:\n${report}`).toEqual([]);
  });

  it('lists every tenant table as distributed by organization_id with organizations, every global one as a reference table', async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client
      .query<{ name: string; type: string; column: string; colocation: number }>(
        `SELECT table_name::text AS name, citus_table_type AS type, distribution_column AS column,
                colocation_id AS colocation FROM citus_tables`,
      )
      .finally(() => client.end());
    const got = new Map(rows.map((r) => [r.name, r]));
    const organizations = got.get('organizations');
    const wrong: string[] = [];
    for (const table of catalog.tables) {
      const row = got.get(table);
      const global = !catalog.tenant.has(table);
      if (global) {
        if (row?.type !== 'reference') wrong.push(`${table}: ${row?.type ?? 'not in Citus'} (want reference)`);
        continue;
      }
      const column = table === 'organizations' ? 'id' : 'organization_id';
      if (row?.type !== 'distributed' || row.column !== column || row.colocation !== organizations?.colocation) {
        wrong.push(
          `${table}: ${row ? `${row.type} by ${row.column}, colocation ${row.colocation}` : 'not in Citus'} (want distributed by ${column}, colocation ${organizations?.colocation})`,
        );
      }
    }
    expect(
      wrong,
      `${wrong.length} of ${catalog.tables.length} tables are not as docs/scaling.md says:\n${wrong.join('\n')}`,
    ).toEqual([]);
  });

  describe('the API on the coordinator', () => {
    let owner: TestUser;
    let other: TestUser;
    let receiver: Receiver;

    beforeAll(async () => {
      config = loadConfig({
        ...TEST_ENV,
        ...RETRY_ENV,
        MAIL_OUTBOX_FILE: mailFile,
        ...(process.env.CITUS_LOG_LEVEL ? { LOG_LEVEL: process.env.CITUS_LOG_LEVEL } : {}),
      });
      // A superuser of a database dedicated to the service (README, "Superuser only"): the
      // service still switches to crm_app / crm_platform in every transaction.
      database = await openDatabase({ databaseUrl: url, poolMax: 10 });
      app = await buildApp(config, database);
      const h = { app, database };
      owner = await newTenant(h);
      other = await newTenant(h);
      receiver = await startReceiver(ok200);
    }, 120_000);
    afterAll(async () => {
      await receiver?.close();
    });

    it('signs up, keeps customers, is paid an invoice (its event in the outbox), and keeps tenants apart', async () => {
      const hook = await owner.call('POST', '/api/webhooks', { url: receiver.url, events: ['invoice.paid'] });
      expect(hook.statusCode, hook.body).toBe(201);

      const customer = await owner.call('POST', '/api/customers', { firstName: 'Maple', lastName: 'Street HOA' });
      expect(customer.statusCode, customer.body).toBe(201);
      const customerId = customer.json().data.id as string;
      const list = await owner.call('GET', '/api/customers');
      expect(list.statusCode, list.body).toBe(200);
      expect(list.json().data.map((c: { id: string }) => c.id)).toContain(customerId);

      const invoice = await owner.call('POST', '/api/invoices', {
        customerId,
        lineItems: [{ description: 'Spring cleanup', quantity: 1, unitPrice: 120.5 }],
      });
      expect(invoice.statusCode, invoice.body).toBe(201);
      const invoiceId = invoice.json().data.id as string;
      const sent = await owner.call('POST', `/api/invoices/${invoiceId}/send`);
      expect(sent.statusCode, sent.body).toBe(200);
      const paid = await owner.call('POST', `/api/invoices/${invoiceId}/payments`, {
        amount: 120.5,
        paymentDate: invoice.json().data.invoiceDate,
        method: 'card',
      });
      expect(paid.statusCode, paid.body).toBe(201);
      expect(paid.json().data.status).toBe('paid');

      // The change and its event commit together: the outbox holds invoice.paid on the shard.
      const outbox = await database?.platformQuery(
        { text: `SELECT count(*)::int FROM events WHERE organization_id = $1 AND type = 'invoice.paid'` },
        [owner.organizationId],
      );
      expect(Number(outbox?.[0]?.[0])).toBe(1);

      // An API key: found through the global secret_lookups table, then its organization's shard.
      const key = await owner.call('POST', '/api/api-keys', { name: 'citus', role: 'admin' });
      expect(key.statusCode, key.body).toBe(201);
      const byKey = await app?.inject({
        method: 'GET',
        url: `/api/customers/${customerId}`,
        headers: { authorization: `Bearer ${key.json().data.key}` },
      });
      expect(byKey?.statusCode, byKey?.body).toBe(200);

      // A booking slug likewise (secret_lookups, kind booking_slug): unique across organizations,
      // the public form found through it; an unknown slug is a 404.
      const slug = `citus-${randomBytes(3).toString('hex')}`;
      const set = await owner.call('PATCH', '/api/settings', { bookingSlug: slug });
      expect(set.statusCode, set.body).toBe(200);
      expect((await other.call('PATCH', '/api/settings', { bookingSlug: slug })).statusCode).toBe(409);
      const form = await app?.inject({ method: 'GET', url: `/api/public/${slug}/challenge` });
      expect(form?.statusCode, form?.body).toBe(200);
      expect((await app?.inject({ method: 'GET', url: '/api/public/no-such-form/challenge' }))?.statusCode).toBe(404);

      // Another organization's id is a 404, on Citus as on PostgreSQL.
      expect((await other.call('GET', `/api/customers/${customerId}`)).statusCode).toBe(404);
      expect((await other.call('GET', `/api/invoices/${invoiceId}`)).statusCode).toBe(404);
      const theirs = await other.call('GET', '/api/customers');
      expect(theirs.json().data).toEqual([]);
    }, 120_000);

    /*
     * The webhook worker on Citus: the fan-out and the claim run one organization at a time
     * (src/delivery/fanout.ts, queue.ts: Citus locks rows only within one shard), chosen by the
     * worker itself because the database is Citus. invoice.paid, committed by the flow above,
     * reaches the local receiver, signed, its body naming the organization; the other
     * organization's event goes to its own endpoint only; the successes are recorded on the
     * shard (webhook_record_successes_org, drizzle/0051).
     */
    it('delivers webhooks: the fan-out and the claim one organization at a time', async () => {
      const theirs = await other.call('POST', '/api/webhooks', { url: receiver.url, events: ['customer.created'] });
      expect(theirs.statusCode, theirs.body).toBe(201);
      const created = await other.call('POST', '/api/customers', { firstName: 'Other', lastName: 'Tenant' });
      expect(created.statusCode, created.body).toBe(201);
      const worker = startWorker(database as Database, config);
      try {
        await waitFor(async () => receiver.received.length >= 2, 'two deliveries', 60_000);
        await waitFor(
          async () => {
            const rows = await database?.platformQuery(
              {
                text: `SELECT count(*)::int FROM webhook_deliveries WHERE organization_id = ANY($1) AND status = 'succeeded'`,
              },
              [[owner.organizationId, other.organizationId]],
            );
            return Number(rows?.[0]?.[0]) === 2;
          },
          'both recorded as succeeded',
          60_000,
        );
      } finally {
        await worker.stop();
      }
      const bodies = receiver.received.map((r) => JSON.parse(r.body) as { event: string; organizationId: string });
      expect(bodies.map((b) => `${b.event} ${b.organizationId}`).sort()).toEqual(
        [`customer.created ${other.organizationId}`, `invoice.paid ${owner.organizationId}`].sort(),
      );
      expect(receiver.received.every((r) => typeof r.headers['x-service-signature'] === 'string')).toBe(true);
    }, 120_000);

    // The worker's other results, one statement each on the organization's shard: failures (retried
    // until the schedule is used up; RETRY_ENV's is 100 ms apart) and a 429 with Retry-After (the endpoint paused, no attempt used up).
    it('records failed attempts and a deferral', async () => {
      const failing = await startReceiver((_req, res) => res.writeHead(500).end('down'));
      const busy = await startReceiver((_req, res) => res.writeHead(429, { 'retry-after': '3600' }).end('later'));
      const worker = startWorker(database as Database, config);
      try {
        const down = await other.call('POST', '/api/webhooks', { url: failing.url, events: ['customer.updated'] });
        const later = await other.call('POST', '/api/webhooks', { url: busy.url, events: ['customer.updated'] });
        expect([down.statusCode, later.statusCode]).toEqual([201, 201]);
        const customer = await other.call('POST', '/api/customers', { firstName: 'Birch', lastName: 'Court' });
        const updated = await other.call('PATCH', `/api/customers/${customer.json().data.id}`, {
          firstName: 'Birchwood',
        });
        expect(updated.statusCode, updated.body).toBe(200);
        const stateOf = async (endpointId: string) => {
          const rows = await database?.platformQuery(
            {
              text: `SELECT d.status, d.attempt_count, (SELECT count(*)::int FROM webhook_attempts a WHERE a.organization_id = d.organization_id AND a.delivery_id = d.id)
                     FROM webhook_deliveries d WHERE d.organization_id = $1 AND d.endpoint_id = $2`,
            },
            [other.organizationId, endpointId],
          );
          return rows?.[0] ?? [];
        };
        await waitFor(async () => (await stateOf(down.json().data.id))[0] === 'dead', 'the retries used up', 60_000);
        expect(await stateOf(down.json().data.id)).toEqual(['dead', 5, 5]);
        await waitFor(async () => (await stateOf(later.json().data.id))[2] === 1, 'a deferral recorded', 60_000);
        expect(await stateOf(later.json().data.id)).toEqual(['pending', 0, 1]);
      } finally {
        await worker.stop();
        await failing.close();
        await busy.close();
      }
    }, 120_000);

    // A completed job billed: markJobsBilled's UPDATE … FROM unnest of its array parameters
    // (routed to the organization's shard), then the activity rows as VALUES.
    it('bills a completed job', async () => {
      const customer = await owner.call('POST', '/api/customers', { firstName: 'Cedar', lastName: 'Lane' });
      const customerId = customer.json().data.id as string;
      const job = await owner.call('POST', '/api/jobs', {
        customerId,
        scheduledDate: '2026-04-20',
        lineItems: [{ description: 'Hedge trim', quantity: 2, unitPrice: 40 }],
      });
      expect(job.statusCode, job.body).toBe(201);
      const jobId = job.json().data.id as string;
      const done = await owner.call('PATCH', `/api/jobs/${jobId}`, { status: 'completed' });
      expect(done.statusCode, done.body).toBe(200);
      const billed = await owner.call('POST', '/api/invoices/from-jobs', { jobIds: [jobId] });
      expect(billed.statusCode, billed.body).toBe(201);
      const after = await owner.call('GET', `/api/jobs/${jobId}`);
      expect(after.json().data.invoiceId).toBeTruthy();
      expect((await other.call('GET', `/api/jobs/${jobId}`)).statusCode).toBe(404);
    }, 120_000);

    /*
     * A schedule's visits on Citus (src/modules/jobs/schedules/schedules.visits.ts): made when it is
     * created, rewritten, removed and made again when it is edited, canceled when it is paused, each
     * visit with its checklist and activity rows, all on the organization's shard. Made as one
     * INSERT … SELECT on PostgreSQL, which Citus ran as a COPY to the shard and refused under
     * row-level security (500 "COPY FROM not supported with row-level security").
     */
    it("makes, rewrites and cancels a schedule's visits, and shows them on the calendar", async () => {
      const customer = await owner.call('POST', '/api/customers', { firstName: 'Elm', lastName: 'Court' });
      const customerId = customer.json().data.id as string;
      const startDate = addDays(todayIn('UTC'), 2);
      const created = await owner.call('POST', '/api/jobs/schedules', {
        customerId,
        title: 'Weekly mowing',
        rrule: 'FREQ=WEEKLY;BYDAY=MO,WE,FR',
        startDate,
        startTime: '08:00',
        durationMinutes: 45,
        lineItems: [{ description: 'Mowing', quantity: 1, unitPrice: 45 }],
        checklist: ['Mow', 'Edge'],
        billing: { mode: 'batch' },
      });
      expect(created.statusCode, created.body).toBe(201);
      const scheduleId = created.json().data.id as string;
      const endDate = addDays(startDate, 40);
      type Day = { date: string; jobs: Array<{ id: string; startTime: string | null; total: number }> };
      const calendar = async () => {
        const res = await owner.call(
          'GET',
          `/api/jobs/calendar?startDate=${startDate}&endDate=${endDate}&scheduleId=${scheduleId}&status=scheduled`,
        );
        expect(res.statusCode, res.body).toBe(200);
        return res.json().data as Day[];
      };
      const weekday = (date: string) => new Date(`${date}T12:00:00Z`).getUTCDay();
      const made = await calendar();
      expect(made.length).toBeGreaterThan(10);
      expect(new Set(made.map((d) => weekday(d.date)))).toEqual(new Set([1, 3, 5]));
      expect(
        made.every((d) => d.jobs.length === 1 && d.jobs[0]?.startTime === '08:00' && d.jobs[0]?.total === 45),
      ).toBe(true);
      const first = await owner.call('GET', `/api/jobs/${made[0]?.jobs[0]?.id}`);
      expect(first.json().data.checklist.map((c: { text: string }) => c.text)).toEqual(['Mow', 'Edge']);

      // Fridays dropped, Tuesdays added, the time, the price and the checklist rewritten.
      const edited = await owner.call('PATCH', `/api/jobs/schedules/${scheduleId}`, {
        rrule: 'FREQ=WEEKLY;BYDAY=MO,TU,WE',
        startTime: '09:30',
        lineItems: [{ description: 'Mowing', quantity: 1, unitPrice: 50 }],
        checklist: ['Mow', 'Edge', 'Blow'],
      });
      expect(edited.statusCode, edited.body).toBe(200);
      const changes = edited.json().data.visits as { updated: number; added: number; removed: number };
      expect(changes.removed).toBeGreaterThan(0);
      expect(changes.added).toBeGreaterThan(0);
      expect(changes.updated).toBeGreaterThan(0);
      const after = await calendar();
      expect(new Set(after.map((d) => weekday(d.date)))).toEqual(new Set([1, 2, 3]));
      expect(
        after.every((d) => d.jobs.length === 1 && d.jobs[0]?.startTime === '09:30' && d.jobs[0]?.total === 50),
      ).toBe(true);
      for (const id of [after[0]?.jobs[0]?.id, after.find((d) => weekday(d.date) === 2)?.jobs[0]?.id]) {
        const visit = await owner.call('GET', `/api/jobs/${id}`);
        expect(visit.json().data.checklist.map((c: { text: string }) => c.text)).toEqual(['Mow', 'Edge', 'Blow']);
      }
      expect((await other.call('GET', `/api/jobs/${after[0]?.jobs[0]?.id}`)).statusCode).toBe(404);

      const paused = await owner.call('POST', `/api/jobs/schedules/${scheduleId}/pause`);
      expect(paused.statusCode, paused.body).toBe(200);
      expect(paused.json().data.visits.removed).toBeGreaterThanOrEqual(after.length);
      expect(await calendar()).toEqual([]);
      // Resumed: the canceled visits gave their occurrences back, so they are made again.
      const resumed = await owner.call('POST', `/api/jobs/schedules/${scheduleId}/resume`);
      expect(resumed.statusCode, resumed.body).toBe(200);
      expect(resumed.json().data.visits.added).toBe(paused.json().data.visits.removed);
      expect((await calendar()).map((d) => d.date)).toEqual(after.map((d) => d.date));
    }, 120_000);

    // A job moved to another day and time: its starts_at is a CASE over the new date and time
    // (src/modules/jobs/jobs.times.ts), which Citus refuses in an UPDATE when it reads columns.
    it('reschedules a job and sets its start time', async () => {
      const customer = await owner.call('POST', '/api/customers', { firstName: 'Fir', lastName: 'Way' });
      const job = await owner.call('POST', '/api/jobs', {
        customerId: customer.json().data.id,
        scheduledDate: '2026-07-01',
        startTime: '08:00',
      });
      expect(job.statusCode, job.body).toBe(201);
      const moved = await owner.call('PATCH', `/api/jobs/${job.json().data.id}`, {
        scheduledDate: '2026-07-02',
        startTime: '10:15',
      });
      expect(moved.statusCode, moved.body).toBe(200);
      expect(moved.json().data).toMatchObject({ scheduledDate: '2026-07-02', startTime: '10:15' });
      expect(moved.json().data.startsAt).toMatch(/^2026-07-02T/);
    }, 120_000);

    // The day route stored: UPDATE jobs … FROM unnest(the stops' ids) WITH ORDINALITY.
    it("stores a crew's day route", async () => {
      const settings = await owner.call('PATCH', '/api/settings', { depot: { lat: 39.7, lng: -89.7 } });
      expect(settings.statusCode, settings.body).toBe(200);
      const crew = await owner.call('POST', '/api/crew-tracking/crews', { name: 'North crew' });
      const crewId = crew.json().data.id as string;
      const customerId = (await owner.call('POST', '/api/customers', { firstName: 'Gum', lastName: 'Tree' })).json()
        .data.id as string;
      const jobIds: string[] = [];
      for (const lng of [-89.3, -89.6, -89.4]) {
        const property = await owner.call('POST', '/api/properties', {
          customerId,
          street: `${lng} Main`,
          lat: 39.7,
          lng,
        });
        expect(property.statusCode, property.body).toBe(201);
        const job = await owner.call('POST', '/api/jobs', {
          customerId,
          propertyId: property.json().data.id,
          scheduledDate: '2026-05-05',
          crewId,
        });
        jobIds.push(job.json().data.id);
      }
      const applied = await owner.call('POST', `/api/jobs/route/apply?date=2026-05-05&crewId=${crewId}`, {});
      expect(applied.statusCode, applied.body).toBe(200);
      expect(applied.json().data.stops.map((s: { jobId: string }) => s.jobId)).toEqual([
        jobIds[1],
        jobIds[2],
        jobIds[0],
      ]);
      const stored = await owner.call('GET', `/api/jobs/${jobIds[0]}`);
      expect(stored.json().data.routeOrder).toBe(3);
    }, 120_000);

    // A new country: the settings change marks every phone (one UPDATE), the worker reads them
    // again (UPDATE customers … FROM jsonb_to_recordset of the batch).
    it('reads phones again when the country changes', async () => {
      const customer = await owner.call('POST', '/api/customers', {
        firstName: 'Holly',
        lastName: 'Bush',
        phone: '020 7946 0018',
      });
      expect(customer.statusCode, customer.body).toBe(201);
      const changed = await owner.call('PATCH', '/api/settings', { country: 'GB' });
      expect(changed.statusCode, changed.body).toBe(200);
      expect(await readPhonesOnce(database as Database, 20, owner.organizationId)).toBeGreaterThan(0);
      const read = await owner.call('GET', `/api/customers/${customer.json().data.id}`);
      expect(read.json().data.phoneE164).toBe('+442079460018');
    }, 120_000);

    // Winter routes: stops rewritten and reordered (UPDATE … FROM (VALUES …)), a storm
    // dispatched, serviced and billed (winter_visits marked billed from a VALUES list).
    it('keeps winter routes: stops rewritten and optimized, a storm dispatched and billed', async () => {
      const customerId = (await owner.call('POST', '/api/customers', { firstName: 'Ivy', lastName: 'Snow' })).json()
        .data.id as string;
      const properties: string[] = [];
      for (const lng of [0.04, 0, 0.03, 0.01, 0.02]) {
        const p = await owner.call('POST', '/api/properties', { customerId, street: `${lng} Snow St`, lat: 0, lng });
        properties.push(p.json().data.id);
      }
      const stop = (propertyId: string, price = 45) => ({
        propertyId,
        services: ['plow'],
        billing: { mode: 'per_push', price },
      });
      const created = await owner.call('POST', '/api/winter-routes', {
        name: 'North',
        depot: { lat: 0, lng: -0.01 },
        stops: properties.map((p) => stop(p)),
      });
      expect(created.statusCode, created.body).toBe(201);
      const routeId = created.json().data.id as string;
      const put = await owner.call('PUT', `/api/winter-routes/${routeId}/stops`, {
        stops: properties.map((p) => stop(p, 50)),
      });
      expect(put.statusCode, put.body).toBe(200);
      const optimized = await owner.call('POST', `/api/winter-routes/${routeId}/optimize`);
      expect(optimized.statusCode, optimized.body).toBe(200);
      expect(optimized.json().data.distanceAfterKm).toBeLessThan(optimized.json().data.distanceBeforeKm);
      const storm = await owner.call('POST', '/api/winter-routes/storms', {
        name: 'Jan 5',
        startedAt: '2026-01-05T03:00:00Z',
        snowfallInches: 4,
      });
      expect(storm.statusCode, storm.body).toBe(201);
      const stormId = storm.json().data.id as string;
      const dispatched = await owner.call('POST', `/api/winter-routes/storms/${stormId}/dispatch`, {});
      expect(dispatched.statusCode, dispatched.body).toBe(201);
      for (const run of dispatched.json().data.runs as Array<{ id: string; visits: Array<{ id: string }> }>) {
        for (const v of run.visits) {
          const rec = await owner.call('POST', `/api/winter-routes/runs/${run.id}/visits/${v.id}`, {
            status: 'serviced',
            pushes: 2,
          });
          expect(rec.statusCode, rec.body).toBe(200);
        }
      }
      const billed = await owner.call('POST', `/api/winter-routes/storms/${stormId}/invoice`);
      expect(billed.statusCode, billed.body).toBe(200);
      const report = (await owner.call('GET', `/api/winter-routes/storms/${stormId}/report`)).json().data;
      expect(report.routes.reduce((sum: number, r: { billed: number }) => sum + r.billed, 0)).toBe(5 * 2 * 50);
    }, 120_000);

    // A schedule's bill keys (invoice_billing_keys): claimed, then pointed at their invoices by
    // UPDATE … FROM (VALUES …) (src/modules/invoices/invoices.billing-keys.ts, the billing worker's).
    it("records a schedule bill's key against its invoice", async () => {
      const customerId = (await owner.call('POST', '/api/customers', { firstName: 'Juniper', lastName: 'Hill' })).json()
        .data.id as string;
      const invoice = await owner.call('POST', '/api/invoices', {
        customerId,
        lineItems: [{ description: 'Installment', quantity: 1, unitPrice: 30 }],
      });
      const invoiceId = invoice.json().data.id as string;
      const key = `schedule:citus:installment:1`;
      await inTenant((database as Database).db, owner.organizationId, systemActor('citus-test'), async (ctx) => {
        expect([...(await claimBillingKeys(ctx, [key]))]).toEqual([key]);
        await recordBillingKeys(ctx, [{ key, invoiceId }]);
      });
      const rows = await database?.platformQuery(
        { text: 'SELECT invoice_id FROM invoice_billing_keys WHERE organization_id = $1 AND key = $2' },
        [owner.organizationId, key],
      );
      expect(rows?.[0]?.[0]).toBe(invoiceId);
    }, 120_000);

    it('shows jobs on the calendar and stores GPS points, rows as VALUES lists', async () => {
      // On Citus every multi-row statement takes its rows as a VALUES list (src/db/values.ts).
      expect(rowsAsArrays()).toBe(false);
      const customer = await owner.call('POST', '/api/customers', { firstName: 'Dogwood', lastName: 'Row' });
      const customerId = customer.json().data.id as string;
      for (const scheduledDate of ['2026-06-01', '2026-06-01', '2026-06-03']) {
        const job = await owner.call('POST', '/api/jobs', { customerId, scheduledDate });
        expect(job.statusCode, job.body).toBe(201);
      }
      const calendar = await owner.call(
        'GET',
        `/api/jobs/calendar?startDate=2026-06-01&endDate=2026-06-30&customerId=${customerId}`,
      );
      expect(calendar.statusCode, calendar.body).toBe(200);
      const days = calendar.json().data as Array<{ date: string; jobs: Array<{ customerId: string }> }>;
      expect(days.map((d) => [d.date, d.jobs.length])).toEqual([
        ['2026-06-01', 2],
        ['2026-06-03', 1],
      ]);

      const at = Date.now() - 60_000;
      const points = [0, 1, 2].map((i) => ({
        lat: 41.9 + i / 1000,
        lng: -87.6,
        recordedAt: new Date(at + i * 1000).toISOString(),
      }));
      const posted = await owner.call('POST', '/api/crew-tracking/locations', { points });
      expect(posted.statusCode, posted.body).toBe(201);
      expect(posted.json().data).toEqual({ accepted: 3, duplicates: 0 });
      const again = await owner.call('POST', '/api/crew-tracking/locations', { points });
      expect(again.json().data).toEqual({ accepted: 0, duplicates: 3 });
    }, 120_000);
  });
});
