import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowsOf } from '../../src/db/client.js';
import { newId } from '../../src/platform/ids.js';
import { createCustomer, createProperty, createService, insertJob } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

/*
 * Deleting a row that other rows name (src/flows/delete-referenced.ts). Until drizzle/0038 the
 * database nulled those references (ON DELETE SET NULL), which Citus refuses on a foreign key
 * carrying the organization; the keys are NO ACTION now, and each delete path clears them
 * first. Each case seeds the referencing rows through the superuser connection, deletes the
 * parent through the API, and checks that the referencing rows are still there with a null
 * reference. A path that forgot a reference answers 409/500 here (the key refuses the delete).
 */
describe('deleting a row other rows name', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  const exec = (q: ReturnType<typeof sql>) => h.admin.db.execute(q);
  const one = async <T>(q: ReturnType<typeof sql>) => rowsOf<T>(await exec(q))[0] as T;
  const org = () => owner.organizationId;
  const memberIdOf = async (user: TestUser) =>
    (
      await one<{ id: string }>(
        sql`SELECT id FROM members WHERE organization_id = ${org()} AND user_id = ${user.userId}`,
      )
    ).id;

  async function crew() {
    const id = newId('crw');
    await exec(sql`INSERT INTO crews (id, organization_id, name) VALUES (${id}, ${org()}, 'North crew')`);
    return id;
  }
  async function assignment(fields: { crewId?: string; memberId?: string; jobId?: string }) {
    const equipmentId = newId('eqp');
    const id = newId('eqa');
    await exec(
      sql`INSERT INTO equipment (id, organization_id, name, category) VALUES (${equipmentId}, ${org()}, 'Mower', 'mower')`,
    );
    await exec(sql`INSERT INTO equipment_assignments (id, organization_id, equipment_id, checked_out_at, created_by, crew_id, member_id, job_id)
      VALUES (${id}, ${org()}, ${equipmentId}, now(), ${owner.userId}, ${fields.crewId ?? null}, ${fields.memberId ?? null}, ${fields.jobId ?? null})`);
    return id;
  }
  async function timeEntry(jobId: string) {
    const id = newId('tme');
    await exec(sql`INSERT INTO time_entries (id, organization_id, member_id, user_id, type, started_at, ended_at, job_id)
      VALUES (${id}, ${org()}, ${await memberIdOf(owner)}, ${owner.userId}, 'work', now() - interval '1 hour', now(), ${jobId})`);
    return id;
  }
  async function purchaseOrder(jobId: string) {
    const vendorId = newId('vnd');
    const id = newId('po');
    await exec(sql`INSERT INTO vendors (id, organization_id, name) VALUES (${vendorId}, ${org()}, 'Seed Co')`);
    await exec(sql`INSERT INTO purchase_orders (id, organization_id, po_number, vendor_id, status, order_date, total_cents, job_id)
      VALUES (${id}, ${org()}, ${`PO-${id.slice(-8)}`}, ${vendorId}, 'draft', '2026-06-01', 0, ${jobId})`);
    return id;
  }
  async function draftInvoice(customerId: string, extra: Record<string, unknown> = {}) {
    const res = await owner.call('POST', '/api/invoices', {
      customerId,
      lineItems: [{ description: 'Mowing', quantity: 1, unitPrice: 45 }],
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id as string;
  }
  const value = async (table: string, id: string, column: string) =>
    (
      await one<{ v: string | null } | undefined>(
        sql`SELECT ${sql.identifier(column)} AS v FROM ${sql.identifier(table)} WHERE organization_id = ${org()} AND id = ${id}`,
      )
    )?.v;
  /** The row is still there, its reference null (undefined: the row is gone). */
  const expectCleared = async (table: string, id: string, column: string) =>
    expect(await value(table, id, column), `${table}.${column}`).toBeNull();

  it('a crew: its jobs, schedules and equipment assignments keep living without it', async () => {
    const crewId = await crew();
    const customer = await createCustomer(h, owner);
    const job = await insertJob(h, owner, customer.id, 'scheduled');
    await exec(sql`UPDATE jobs SET crew_id = ${crewId} WHERE organization_id = ${org()} AND id = ${job.id}`);
    const held = await assignment({ crewId });
    const res = await owner.call('DELETE', `/api/crew-tracking/crews/${crewId}`);
    expect(res.statusCode, res.body).toBe(204);
    await expectCleared('jobs', job.id, 'crew_id');
    await expectCleared('equipment_assignments', held, 'crew_id');
  });

  it('a member: equipment assigned to them keeps its record', async () => {
    const worker = await addMember(h, owner, 'member');
    const held = await assignment({ memberId: await memberIdOf(worker) });
    const res = await owner.call('DELETE', `/api/members/${await memberIdOf(worker)}`);
    expect(res.statusCode, res.body).toBe(204);
    await expectCleared('equipment_assignments', held, 'member_id');
  });

  it('a service: invoice lines keep their own name and price', async () => {
    const service = await createService(h, owner);
    const customer = await createCustomer(h, owner);
    const invoiceId = await draftInvoice(customer.id);
    const { id: lineId } = await one<{ id: string }>(
      sql`UPDATE invoice_line_items SET service_id = ${service.id} WHERE organization_id = ${org()} AND invoice_id = ${invoiceId} RETURNING id`,
    );
    const res = await owner.call('DELETE', `/api/services/${service.id}`);
    expect(res.statusCode, res.body).toBe(204);
    await expectCleared('invoice_line_items', lineId, 'service_id');
  });

  it('a job: time entries, purchase orders and equipment assignments keep living without it', async () => {
    const customer = await createCustomer(h, owner);
    const job = await insertJob(h, owner, customer.id, 'scheduled');
    const entry = await timeEntry(job.id);
    const order = await purchaseOrder(job.id);
    const held = await assignment({ jobId: job.id });
    const res = await owner.call('DELETE', `/api/jobs/${job.id}`);
    expect(res.statusCode, res.body).toBe(204);
    await expectCleared('time_entries', entry, 'job_id');
    await expectCleared('purchase_orders', order, 'job_id');
    await expectCleared('equipment_assignments', held, 'job_id');
  });

  it('a draft invoice: the job it billed may be billed again', async () => {
    const customer = await createCustomer(h, owner);
    const job = await insertJob(h, owner, customer.id, 'completed');
    const invoiceId = await draftInvoice(customer.id);
    await exec(sql`UPDATE jobs SET invoice_id = ${invoiceId} WHERE organization_id = ${org()} AND id = ${job.id}`);
    const res = await owner.call('DELETE', `/api/invoices/${invoiceId}`);
    expect(res.statusCode, res.body).toBe(204);
    await expectCleared('jobs', job.id, 'invoice_id');
  });

  it('a property: jobs and invoices at that address keep living without it', async () => {
    const customer = await createCustomer(h, owner);
    const property = await createProperty(h, owner, customer.id);
    const job = await insertJob(h, owner, customer.id, 'scheduled');
    await exec(sql`UPDATE jobs SET property_id = ${property.id} WHERE organization_id = ${org()} AND id = ${job.id}`);
    const invoiceId = await draftInvoice(customer.id, { propertyId: property.id });
    const res = await owner.call('DELETE', `/api/properties/${property.id}`);
    expect(res.statusCode, res.body).toBe(204);
    await expectCleared('jobs', job.id, 'property_id');
    await expectCleared('invoices', invoiceId, 'property_id');
  });

  it("a customer deleted for good: other modules' rows naming its jobs keep living without them", async () => {
    const customer = await createCustomer(h, owner);
    const job = await insertJob(h, owner, customer.id, 'scheduled');
    const entry = await timeEntry(job.id);
    const order = await purchaseOrder(job.id);
    await draftInvoice(customer.id);
    const res = await owner.call('DELETE', `/api/customers/${customer.id}/hard-delete`);
    expect(res.statusCode, res.body).toBe(204);
    expect(await value('jobs', job.id, 'id')).toBeUndefined();
    await expectCleared('time_entries', entry, 'job_id');
    await expectCleared('purchase_orders', order, 'job_id');
  });
});
