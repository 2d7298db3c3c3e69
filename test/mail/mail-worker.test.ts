import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Db } from '../../src/db/client.js';
import { mailJobs } from '../../src/db/schema/index.js';
import { deliverDueMail } from '../../src/modules/mail/mail.tasks.js';
import { pdfSources } from '../../src/modules/mail.attachments.js';
import { newId } from '../../src/platform/ids.js';
import type { Mailer, MailMessage } from '../../src/platform/mail.js';
import { createCustomer, line } from '../factories.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * The mail worker (mail.deliver) under two workers and a slow relay, and where it draws
 * a PDF. Time is a clock the test moves (a send "takes" 30 s), never waited for.
 */

/** Transactions open when pdfkit starts a document (one entry per PDF drawn). */
const probe = vi.hoisted(() => ({ openAtRender: [] as number[], open: (): number => 0 }));

vi.mock('pdfkit', async (importOriginal) => {
  const real = ((await importOriginal()) as { default: new (...args: unknown[]) => object }).default;
  class Probed extends real {
    constructor(...args: unknown[]) {
      probe.openAtRender.push(probe.open());
      super(...args);
    }
  }
  return { default: Probed };
});

let h: Harness;
let owner: TestUser;

beforeAll(async () => {
  h = await createHarness();
  owner = await newTenant(h);
  // Open transactions: clients checked out of the pool (PostgreSQL), or transactions
  // begun on the one PGlite connection.
  const pool = h.database.pool;
  if (pool) {
    probe.open = () => pool.totalCount - pool.idleCount;
  } else {
    const db = h.database.db;
    const begin = db.transaction.bind(db);
    let open = 0;
    db.transaction = (async (fn, config) =>
      begin(async (tx) => {
        open++;
        try {
          return await fn(tx);
        } finally {
          open--;
        }
      }, config)) as Db['transaction'];
    probe.open = () => open;
  }
});
afterAll(async () => h?.close());

/** A mailer that keeps what it sends and runs `during` inside each send. */
function recordingMailer(during: (m: MailMessage) => Promise<void> | void = () => {}) {
  const sent: MailMessage[] = [];
  const mailer: Mailer = {
    send: async (m) => {
      await during(m);
      sent.push(m);
    },
    close: () => {},
  };
  return { mailer, sent };
}

async function queue(subjects: string[], fields: Partial<typeof mailJobs.$inferInsert> = {}) {
  await h.admin.db.insert(mailJobs).values(
    subjects.map((subject) => ({
      id: newId('mlj'),
      organizationId: owner.organizationId,
      documentType: 'workflow',
      documentId: 'wf_test',
      to: ['pat@example.com'],
      subject,
      body: 'Hello',
      nextAttemptAt: new Date(Date.now() - 1000),
      ...fields,
    })),
  );
}

describe('mail.deliver', () => {
  it('never sends a job twice while its worker is alive, however long its run takes', async () => {
    const subjects = Array.from({ length: 14 }, (_, i) => `slow relay ${i + 1}`);
    await queue(subjects);
    let now = Date.now();
    const clock = () => new Date(now);
    const start = now;
    const second = recordingMailer(() => {
      now += 30_000;
    });
    let secondRan = false;
    // Each send of the first worker takes 30 s (the relay's limit); once its run has lasted
    // past one lease (5 min), a second worker looks for due mail.
    const first = recordingMailer(async () => {
      now += 30_000;
      if (!secondRan && now - start > 5 * 60_000) {
        secondRan = true;
        await deliverDueMail(h.database, { mailer: second.mailer, pdfSources }, clock());
      }
    });
    await deliverDueMail(h.database, { mailer: first.mailer, pdfSources }, clock);
    expect(secondRan).toBe(true);
    const all = [...first.sent, ...second.sent].map((m) => m.subject).sort();
    expect(all).toEqual([...subjects].sort());
    expect(second.sent.length).toBeGreaterThan(0);
    const rows = await h.admin.db.select().from(mailJobs).where(eq(mailJobs.organizationId, owner.organizationId));
    expect(rows.filter((r) => subjects.includes(r.subject)).map((r) => [r.status, r.attempts])).toEqual(
      subjects.map(() => ['sent', 1]),
    );
  });

  it('draws the PDF it attaches with no transaction open', async () => {
    const customer = await createCustomer(h, owner);
    const invoice = (await owner.call('POST', '/api/invoices', { customerId: customer.id, lineItems: [line()] })).json()
      .data;
    await queue(['with a pdf'], { documentType: 'invoice', documentId: invoice.id, attachment: 'pdf' });
    probe.openAtRender.length = 0;
    const { mailer, sent } = recordingMailer();
    expect(await deliverDueMail(h.database, { mailer, pdfSources })).toBe(1);
    expect(probe.openAtRender).toEqual([0]);
    const [attachment] = sent[0]?.attachments ?? [];
    expect(attachment?.filename).toBe(`${invoice.invoiceNumber}.pdf`);
    expect(attachment?.content.subarray(0, 5).toString()).toBe('%PDF-');
  });
});
