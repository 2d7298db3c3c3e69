import { and, asc, count, eq, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { SMTPServer } from 'smtp-server';
import { customers, events, jobs, organizations, properties, services } from '../src/db/schema/index.js';
import { deliverDueMail } from '../src/modules/mail/mail.tasks.js';
import { pdfSources } from '../src/modules/mail.attachments.js';
import { newId } from '../src/platform/ids.js';
import { inTenant } from '../src/platform/tenancy.js';
import type { Harness, TestUser } from './harness.js';

/*
 * Test data shared by every folder. Seed rows are written straight through the
 * database, inside the tenant (so RLS applies as in the services), so a test does
 * not depend on another module's routes; reads go through the harness's superuser
 * connection, so checks do not depend on the routes under test either.
 */

type Org = Pick<TestUser, 'organizationId'>;
const actor = { kind: 'user' as const, id: 'test-factory', role: 'owner' as const };

export async function createCustomer(h: Harness, owner: Org, fields: Partial<typeof customers.$inferInsert> = {}) {
  return inTenant(h.database.db, owner.organizationId, actor, async (ctx) => {
    const [row] = await ctx.tx
      .insert(customers)
      .values({
        id: newId('cus'),
        organizationId: ctx.organizationId,
        firstName: 'Pat',
        lastName: 'Customer',
        email: `pat-${newId('x').slice(2, 12)}@example.com`,
        ...fields,
      })
      .returning();
    return row as typeof customers.$inferSelect;
  });
}

export async function createProperty(
  h: Harness,
  owner: Org,
  customerId: string,
  fields: Partial<typeof properties.$inferInsert> = {},
) {
  return inTenant(h.database.db, owner.organizationId, actor, async (ctx) => {
    const [row] = await ctx.tx
      .insert(properties)
      .values({
        id: newId('prp'),
        organizationId: ctx.organizationId,
        customerId,
        street: '400 Oak Ave',
        city: 'Springfield',
        state: 'IL',
        zip: '62704',
        ...fields,
      })
      .returning();
    return row as typeof properties.$inferSelect;
  });
}

export async function createService(h: Harness, owner: Org, fields: Partial<typeof services.$inferInsert> = {}) {
  return inTenant(h.database.db, owner.organizationId, actor, async (ctx) => {
    const [row] = await ctx.tx
      .insert(services)
      .values({ id: newId('svc'), organizationId: ctx.organizationId, name: 'Mowing', unitPriceCents: 4500, ...fields })
      .returning();
    return row as typeof services.$inferSelect;
  });
}

/** A job row in any status, written directly (to set up a transition under test). */
export async function insertJob(
  h: Harness,
  owner: Org,
  customerId: string,
  status: string,
  scheduledDate = '2026-06-01',
) {
  return inTenant(h.database.db, owner.organizationId, actor, async (ctx) => {
    const [row] = await ctx.tx
      .insert(jobs)
      .values({ id: newId('job'), organizationId: ctx.organizationId, customerId, status, scheduledDate })
      .returning();
    return row as typeof jobs.$inferSelect;
  });
}

/** What PATCH /api/settings would store. */
export async function setSettings(h: Harness, organizationId: string, settings: Record<string, unknown>) {
  await h.admin.db
    .update(organizations)
    .set({ settings: sql`${organizations.settings} || ${JSON.stringify(settings)}::jsonb` })
    .where(eq(organizations.id, organizationId));
}

export const line = (description = 'Mowing', quantity = 1, unitPrice = 100) => ({ description, quantity, unitPrice });

export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
  /** 0 for an event caused by an API call, one more than its cause for one caused by a workflow. */
  depth: number;
}

/** The organization's outbox, oldest first; `type` keeps only that type. */
export async function eventsOf(h: Harness, organizationId: string, type?: string): Promise<EventRow[]> {
  const rows = await h.admin.db
    .select({ id: events.id, type: events.type, data: events.data, depth: events.depth })
    .from(events)
    .where(
      type
        ? and(eq(events.organizationId, organizationId), eq(events.type, type))
        : eq(events.organizationId, organizationId),
    )
    .orderBy(asc(events.createdAt), asc(events.id));
  return rows.map((r) => ({ ...r, data: r.data as Record<string, unknown> }));
}

/** Events recorded by `fn` (compares the outbox before and after). */
export async function eventsDuring(h: Harness, organizationId: string, fn: () => Promise<unknown>) {
  const before = new Set((await eventsOf(h, organizationId)).map((e) => e.id));
  await fn();
  return (await eventsOf(h, organizationId)).filter((e) => !before.has(e.id));
}

export async function countEvents(h: Harness, organizationId: string, type?: string) {
  return (await eventsOf(h, organizationId, type)).length;
}

/** Rows of a tenant table in one organization. */
export async function countRows(h: Harness, table: PgTable & { organizationId: unknown }, organizationId: string) {
  const t = table as PgTable & { organizationId: Parameters<typeof eq>[0] };
  const [row] = await h.admin.db.select({ n: count() }).from(t).where(eq(t.organizationId, organizationId));
  return Number(row?.n ?? 0);
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

/** A real SMTP server on 127.0.0.1 that keeps what it receives. `refuse` makes it reject every message. */
export async function startSmtp() {
  const received: ReceivedMail[] = [];
  const state = { refuse: false };
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (state.refuse) return callback(new Error('mailbox unavailable'));
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}?ignoreTLS=true`,
    received,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Quoted-printable soft breaks removed, so links can be found in raw mail. */
export const mailText = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');

/**
 * Runs the mail worker task once, as the worker would (`now` later than the real clock
 * makes jobs waiting out a retry delay due, instead of waiting). Returns jobs attempted.
 */
export const deliverMail = (h: Harness, now?: Date) =>
  deliverDueMail(h.database, { mailer: h.app.deps.mailer, pdfSources }, now);

/** A time past any retry delay of the mail queue. */
export const later = (days = 2) => new Date(Date.now() + days * 86_400_000);
