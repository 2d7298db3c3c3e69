import { and, asc, eq, sql } from 'drizzle-orm';
import { SMTPServer } from 'smtp-server';
import { customers, events, organizations, properties, services } from '../../src/db/schema/index.js';
import { deliverDueMail } from '../../src/modules/mail/mail.tasks.js';
import { newId } from '../../src/platform/ids.js';
import { inTenant } from '../../src/platform/tenancy.js';
import type { Harness, TestUser } from '../harness.js';

/*
 * Billing test data written straight through the database (inside the tenant, so
 * RLS applies as in the service): customers, properties and catalog services do
 * not depend on the customers REST module.
 */

const actor = { kind: 'user' as const, id: 'test-factory', role: 'owner' as const };

export async function createCustomer(
  h: Harness,
  owner: Pick<TestUser, 'organizationId'>,
  fields: Partial<typeof customers.$inferInsert> = {},
) {
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

export async function createProperty(h: Harness, owner: Pick<TestUser, 'organizationId'>, customerId: string) {
  return inTenant(h.database.db, owner.organizationId, actor, async (ctx) => {
    const [row] = await ctx.tx
      .insert(properties)
      .values({ id: newId('prp'), organizationId: ctx.organizationId, customerId, street: '1 Elm St' })
      .returning();
    return row as typeof properties.$inferSelect;
  });
}

export async function createService(
  h: Harness,
  owner: Pick<TestUser, 'organizationId'>,
  fields: Partial<typeof services.$inferInsert> = {},
) {
  return inTenant(h.database.db, owner.organizationId, actor, async (ctx) => {
    const [row] = await ctx.tx
      .insert(services)
      .values({ id: newId('svc'), organizationId: ctx.organizationId, name: 'Mowing', unitPriceCents: 4500, ...fields })
      .returning();
    return row as typeof services.$inferSelect;
  });
}

/** What PATCH /api/settings would store (that module is built elsewhere). */
export async function setSettings(h: Harness, organizationId: string, settings: Record<string, unknown>) {
  await h.admin.db
    .update(organizations)
    .set({ settings: sql`${organizations.settings} || ${JSON.stringify(settings)}::jsonb` })
    .where(eq(organizations.id, organizationId));
}

export interface EventRow {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/** The organization's outbox, oldest first. */
export async function eventsOf(h: Harness, organizationId: string): Promise<EventRow[]> {
  const rows = await h.admin.db
    .select()
    .from(events)
    .where(and(eq(events.organizationId, organizationId)))
    .orderBy(asc(events.createdAt), asc(events.id));
  return rows.map((r) => ({ id: r.id, type: r.type, data: r.data as Record<string, unknown> }));
}

/** Events recorded by `fn` (compares the outbox before and after). */
export async function eventsDuring(h: Harness, organizationId: string, fn: () => Promise<unknown>) {
  const before = new Set((await eventsOf(h, organizationId)).map((e) => e.id));
  await fn();
  return (await eventsOf(h, organizationId)).filter((e) => !before.has(e.id));
}

export const line = (description = 'Mowing', quantity = 1, unitPrice = 100) => ({ description, quantity, unitPrice });

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
export const deliverMail = (h: Harness, now?: Date) => deliverDueMail(h.database, h.app.deps.mailer, now);

/** A time past any retry delay of the mail queue. */
export const later = (days = 2) => new Date(Date.now() + days * 86_400_000);
