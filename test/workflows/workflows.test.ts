import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events, workflowEventBatches } from '../../src/db/schema/index.js';
import { addDays, today } from '../../src/platform/dates.js';
import { emit } from '../../src/platform/events/outbox.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { createCustomer, eventsOf, line } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { defineWorkflow, drain, jobsOf, runsOf, tagsOf, workflowMails } from './helpers.js';

const tagAction = (tag: string) => ({ type: 'add_customer_tag', tag });

describe('workflows', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h?.close());

  const invoice = async (owner: TestUser, customerId: string, amount: number) => {
    const res = await owner.call('POST', '/api/invoices', { customerId, lineItems: [line('Work', 1, amount)] });
    expect(res.statusCode).toBe(201);
    return res.json().data as { id: string; total: number };
  };

  describe('definitions', () => {
    let owner: TestUser;
    beforeAll(async () => {
      owner = await newTenant(h);
    });

    const valid = {
      name: 'big_invoice',
      trigger: { event: 'invoice.created' },
      conditions: [{ field: 'invoice.total', op: 'gt', value: 1000 }],
      actions: [{ type: 'emit' }],
    };

    it('creates, reads, lists, updates and deletes (owner)', async () => {
      const created = await owner.call('POST', '/api/workflows', { ...valid, description: 'Big ones' });
      expect(created.statusCode).toBe(201);
      const wf = created.json().data;
      expect(wf).toMatchObject({
        name: 'big_invoice',
        description: 'Big ones',
        trigger: { event: 'invoice.created' },
        conditions: valid.conditions,
        actions: [{ type: 'emit' }],
        active: true,
      });
      expect(wf.id).toMatch(/^wfl_/);
      expect((await owner.call('GET', `/api/workflows/${wf.id}`)).json().data.name).toBe('big_invoice');
      const list = await owner.call('GET', '/api/workflows');
      expect(list.json().data.map((w: { id: string }) => w.id)).toEqual([wf.id]);
      const patched = await owner.call('PATCH', `/api/workflows/${wf.id}`, {
        active: false,
        actions: [{ type: 'email', to: 'Office@Example.com', subject: 'Big {{invoiceNumber}}', body: 'x' }],
      });
      expect(patched.statusCode).toBe(200);
      expect(patched.json().data).toMatchObject({
        active: false,
        actions: [{ type: 'email', to: 'office@example.com' }],
      });
      expect((await owner.call('GET', '/api/workflows', undefined, { query: { active: 'true' } })).json().data).toEqual(
        [],
      );
      expect((await owner.call('GET', `/api/workflows/${wf.id}/runs`)).json().data).toEqual([]);
      expect((await owner.call('DELETE', `/api/workflows/${wf.id}`)).statusCode).toBe(204);
      expect((await owner.call('GET', `/api/workflows/${wf.id}`)).statusCode).toBe(404);
    });

    it('takes exactly the email addresses the rest of the API takes (the schema format)', async () => {
      const user = await newTenant(h);
      const addresses = ['.pat@example.com', 'pat.@example.com', `${'a'.repeat(65)}@example.com`, 'pat@example.com'];
      for (const [i, to] of addresses.entries()) {
        const customer = await user.call('POST', '/api/customers', { firstName: 'Pat', email: to });
        const workflow = await user.call('POST', '/api/workflows', {
          ...valid,
          name: `mail_${i}`,
          actions: [{ type: 'email', to, subject: 's', body: 'b' }],
        });
        expect([to, workflow.statusCode]).toEqual([to, customer.statusCode]);
        if (workflow.statusCode === 400) expect(workflow.json().error.message, to).toMatch(/to/);
      }
    });

    it('refuses bad definitions with a clear 4xx and writes nothing', async () => {
      const first = await owner.call('POST', '/api/workflows', valid);
      expect(first.statusCode).toBe(201);
      const bad: Array<[string, Record<string, unknown>, number, string | RegExp]> = [
        ['unknown trigger', { ...valid, name: 'a1', trigger: { event: 'invoice.exploded' } }, 400, /trigger/],
        [
          'workflow event as trigger',
          { ...valid, name: 'a2', trigger: { event: 'workflow.big_invoice' } },
          400,
          /trigger/,
        ],
        [
          'unknown operator',
          { ...valid, name: 'a3', conditions: [{ field: 'invoice.total', op: 'between', value: 1 }] },
          400,
          /op/,
        ],
        [
          'path outside the data',
          { ...valid, name: 'a4', conditions: [{ field: 'customer.email', op: 'eq', value: 'x' }] },
          400,
          /no field "customer"/,
        ],
        [
          'path the resource lacks',
          { ...valid, name: 'a5', conditions: [{ field: 'invoice.colour', op: 'eq', value: 'x' }] },
          400,
          /does not exist/,
        ],
        [
          'bad path syntax',
          { ...valid, name: 'a6', conditions: [{ field: 'invoice..total', op: 'eq', value: 1 }] },
          400,
          /dotted path/,
        ],
        [
          'in without an array',
          { ...valid, name: 'a7', conditions: [{ field: 'invoice.status', op: 'in', value: 'draft' }] },
          400,
          /array/,
        ],
        [
          '11 actions',
          { ...valid, name: 'a8', actions: Array.from({ length: 11 }, () => ({ type: 'emit' })) },
          400,
          /actions/,
        ],
        ['no actions', { ...valid, name: 'a9', actions: [] }, 400, /actions/],
        ['clashing name', valid, 409, /already exists/],
        ['bad name', { ...valid, name: 'Big Invoice' }, 400, /name/],
        [
          'invalid email address',
          { ...valid, name: 'a10', actions: [{ type: 'email', to: 'not-an-address', subject: 's', body: 'b' }] },
          400,
          /to/,
        ],
        [
          'negative daysFromNow',
          { ...valid, name: 'a11', actions: [{ type: 'create_job', title: 'X', daysFromNow: -1 }] },
          400,
          /daysFromNow/,
        ],
        ['unknown action', { ...valid, name: 'a12', actions: [{ type: 'sms', to: 'x' }] }, 400, /actions/],
      ];
      for (const [what, body, status, message] of bad) {
        const res = await owner.call('POST', '/api/workflows', body);
        expect(res.statusCode, what).toBe(status);
        expect(res.json().error.code, what).toBe(status === 409 ? 'CONFLICT' : 'VALIDATION_FAILED');
        expect(res.json().error.message, what).toMatch(message);
      }
      const retriggered = await owner.call('PATCH', `/api/workflows/${first.json().data.id}`, {
        trigger: { event: 'customer.created' },
      });
      expect(retriggered.statusCode, 'new trigger re-checks kept conditions').toBe(400);
      const second = await owner.call('POST', '/api/workflows', { ...valid, name: 'second' });
      const clash = await owner.call('PATCH', `/api/workflows/${second.json().data.id}`, { name: 'big_invoice' });
      expect(clash.statusCode).toBe(409);
      expect(clash.json().error.code).toBe('CONFLICT');
      expect((await owner.call('GET', `/api/workflows/${second.json().data.id}`)).json().data.name).toBe('second');
      await owner.call('DELETE', `/api/workflows/${second.json().data.id}`);
      const list = (await owner.call('GET', '/api/workflows')).json().data;
      expect(list).toHaveLength(1);
      expect(list[0].trigger.event).toBe('invoice.created');
    });

    it('a member may not touch workflows', async () => {
      const member = await addMember(h, owner, 'member');
      expect((await member.call('GET', '/api/workflows')).statusCode).toBe(403);
      expect((await member.call('POST', '/api/workflows', { ...valid, name: 'm1' })).statusCode).toBe(403);
    });
  });

  describe('runs', () => {
    let owner: TestUser;
    let customerId: string;
    let noEmailId: string;
    const timezone = 'America/Chicago';

    beforeAll(async () => {
      owner = await newTenant(h, { timezone });
      customerId = (await createCustomer(h, owner, { email: 'pat@example.com' })).id;
      noEmailId = (await createCustomer(h, owner, { email: null })).id;
    });

    it('matching and not matching: a run only when every condition holds', async () => {
      const wf = await defineWorkflow(owner, {
        name: 'tag_big',
        trigger: { event: 'invoice.created' },
        conditions: [
          { field: 'invoice.total', op: 'gt', value: 1000 },
          { field: 'invoice.status', op: 'in', value: ['draft', 'sent'] },
        ],
        actions: [tagAction('big-spender')],
      });
      await invoice(owner, customerId, 500);
      await drain(h);
      expect(await runsOf(h, wf.id)).toHaveLength(0);
      expect(await tagsOf(h, customerId)).not.toContain('big-spender');

      const big = await invoice(owner, customerId, 1500);
      await drain(h);
      const runs = (await owner.call('GET', `/api/workflows/${wf.id}/runs`)).json().data;
      expect(runs).toHaveLength(1);
      const triggerEvent = (await eventsOf(h, owner.organizationId)).find(
        (e) => e.type === 'invoice.created' && (e.data as { invoiceId: string }).invoiceId === big.id,
      );
      expect(runs[0]).toMatchObject({
        eventId: triggerEvent?.id,
        event: 'invoice.created',
        depth: 0,
        status: 'succeeded',
        actions: [{ type: 'add_customer_tag', status: 'succeeded', customerId, changed: true }],
      });
      expect(runs[0].id).toMatch(/^wfr_/);
      expect(await tagsOf(h, customerId)).toContain('big-spender');
      // Paused: no run.
      await owner.call('PATCH', `/api/workflows/${wf.id}`, { active: false });
      await invoice(owner, customerId, 2000);
      await drain(h);
      expect(await runsOf(h, wf.id)).toHaveLength(1);
    });

    it('a rolled-back change triggers nothing', async () => {
      const wf = await defineWorkflow(owner, {
        name: 'on_customer',
        trigger: { event: 'customer.updated' },
        actions: [{ type: 'emit' }],
      });
      await expect(
        inTenant(h.database.db, owner.organizationId, { kind: 'user', id: 'usr_x', role: 'owner' }, async (ctx) => {
          await emit(ctx, 'customer.updated', { customerId, customer: { id: customerId } });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      await drain(h);
      expect(await runsOf(h, wf.id)).toHaveLength(0);
      await owner.call('DELETE', `/api/workflows/${wf.id}`);
    });

    it('create_job schedules a job for the trigger customer on today + daysFromNow', async () => {
      const wf = await defineWorkflow(owner, {
        name: 'follow_up',
        trigger: { event: 'invoice.created' },
        conditions: [{ field: 'invoice.total', op: 'eq', value: 777 }],
        actions: [{ type: 'create_job', title: 'Follow up {{invoiceNumber}}', daysFromNow: 3 }],
      });
      const before = (await jobsOf(h, owner.organizationId, customerId)).length;
      const inv = await invoice(owner, customerId, 777);
      await drain(h);
      const created = (await jobsOf(h, owner.organizationId, customerId)).slice(before);
      expect(created).toHaveLength(1);
      const number = (await owner.call('GET', `/api/invoices/${inv.id}`)).json().data.invoiceNumber;
      expect(created[0]).toMatchObject({
        status: 'scheduled',
        services: [`Follow up ${number}`],
        scheduledDate: addDays(today(timezone), 3),
      });
      const [run] = await runsOf(h, wf.id);
      expect(run?.actions).toEqual([{ type: 'create_job', status: 'succeeded', jobId: created[0]?.id }]);
      // job.created caused by the workflow carries depth 1.
      const jobEvent = (await eventsOf(h, owner.organizationId)).find(
        (e) => e.type === 'job.created' && (e.data as { jobId: string }).jobId === created[0]?.id,
      );
      expect(jobEvent?.depth).toBe(1);
      await owner.call('DELETE', `/api/workflows/${wf.id}`);
    });

    it('email: to the customer with placeholders, skipped without an address, or to a fixed address', async () => {
      const wf = await defineWorkflow(owner, {
        name: 'mail_big',
        trigger: { event: 'invoice.created' },
        conditions: [{ field: 'invoice.total', op: 'eq', value: 888 }],
        actions: [
          { type: 'email', to: 'customer', subject: 'Invoice {{invoiceNumber}}', body: 'Due {{amountDue}}{{nope}}.' },
          { type: 'email', to: 'office@example.com', subject: 'FYI', body: 'Customer {{invoice.customerId}}' },
        ],
      });
      const before = (await workflowMails(h, owner.organizationId)).length;
      const inv = await invoice(owner, customerId, 888);
      await invoice(owner, noEmailId, 888);
      await drain(h);
      const number = (await owner.call('GET', `/api/invoices/${inv.id}`)).json().data.invoiceNumber;
      // Queued in the action's transaction (exactly once per run); the mail worker sends them.
      const sent = (await workflowMails(h, owner.organizationId)).slice(before);
      expect(sent).toContainEqual({ to: ['pat@example.com'], subject: `Invoice ${number}`, text: 'Due 888.' });
      expect(sent.filter((m) => m.to[0] === 'office@example.com').map((m) => m.text)).toEqual(
        expect.arrayContaining([`Customer ${customerId}`, `Customer ${noEmailId}`]),
      );
      expect(sent).toHaveLength(3);
      const runs = (await owner.call('GET', `/api/workflows/${wf.id}/runs`)).json().data;
      const statuses = runs.map((r: { actions: Array<{ status: string }> }) => r.actions.map((a) => a.status));
      expect(statuses).toEqual(
        expect.arrayContaining([
          ['succeeded', 'succeeded'],
          ['skipped', 'succeeded'],
        ]),
      );
      expect(runs.every((r: { status: string }) => r.status === 'succeeded')).toBe(true);
      await owner.call('DELETE', `/api/workflows/${wf.id}`);
    });

    it('emit: workflow.<name> with {workflow, trigger, data} at depth + 1; a tag already present emits nothing', async () => {
      const wf = await defineWorkflow(owner, {
        name: 'vip.mark',
        trigger: { event: 'invoice.created' },
        conditions: [{ field: 'amountDue', op: 'eq', value: 999 }],
        actions: [tagAction('vip'), { type: 'emit' }],
      });
      await invoice(owner, customerId, 999);
      await drain(h);
      const seen = await eventsOf(h, owner.organizationId);
      const updates = seen.filter((e) => e.type === 'customer.updated').length;
      const emitted = seen.filter((e) => e.type === 'workflow.vip.mark');
      expect(emitted).toHaveLength(1);
      const eventData = emitted[0]?.data as { trigger: { eventId: string } };
      const trigger = seen.find((e) => e.id === eventData.trigger.eventId);
      expect(emitted[0]).toMatchObject({
        depth: 1,
        data: { workflow: { id: wf.id, name: 'vip.mark' }, trigger: { event: 'invoice.created' }, data: trigger?.data },
      });
      // Second time: the tag is there, so no customer.updated; emit still fires.
      await invoice(owner, customerId, 999);
      await drain(h);
      const after = await eventsOf(h, owner.organizationId);
      expect(after.filter((e) => e.type === 'customer.updated')).toHaveLength(updates);
      expect(after.filter((e) => e.type === 'workflow.vip.mark')).toHaveLength(2);
      const runs = (await owner.call('GET', `/api/workflows/${wf.id}/runs`)).json().data;
      expect(runs[0].actions[0]).toMatchObject({ type: 'add_customer_tag', status: 'succeeded', changed: false });
      await owner.call('DELETE', `/api/workflows/${wf.id}`);
    });

    it('a failing action is recorded failed, the others still run, the run is failed', async () => {
      const wf = await defineWorkflow(owner, {
        name: 'on_delete',
        trigger: { event: 'customer.deleted' },
        actions: [
          { type: 'create_job', title: 'Collect equipment', daysFromNow: 0 },
          { type: 'email', to: 'customer', subject: 's', body: 'b' },
          { type: 'emit' },
        ],
      });
      const doomed = await createCustomer(h, owner, { email: 'gone@example.com' });
      expect((await owner.call('DELETE', `/api/customers/${doomed.id}`)).statusCode).toBe(204);
      await drain(h);
      const [run] = (await owner.call('GET', `/api/workflows/${wf.id}/runs`)).json().data;
      expect(run.status).toBe('failed');
      expect(run.actions.map((a: { status: string }) => a.status)).toEqual(['failed', 'failed', 'succeeded']);
      expect(run.actions[0].error).toMatch(/customer/i);
      expect(await jobsOf(h, owner.organizationId, doomed.id)).toHaveLength(0);
      await owner.call('DELETE', `/api/workflows/${wf.id}`);
    });

    it('loop guard: workflows run only for events of depth < 3', async () => {
      const loopOwner = await newTenant(h);
      const cus = await createCustomer(h, loopOwner);
      const wf = await defineWorkflow(loopOwner, {
        name: 'job_begets_job',
        trigger: { event: 'job.created' },
        actions: [{ type: 'create_job', title: 'Again', daysFromNow: 1 }],
      });
      const res = await loopOwner.call('POST', '/api/jobs', {
        customerId: cus.id,
        scheduledDate: '2030-01-01',
        services: ['First'],
      });
      expect(res.statusCode).toBe(201);
      await drain(h);
      const depths = (await eventsOf(h, loopOwner.organizationId))
        .filter((e) => e.type === 'job.created')
        .map((e) => e.depth);
      expect(depths).toEqual([0, 1, 2, 3]);
      const runs = await runsOf(h, wf.id);
      expect(runs.map((r) => r.depth)).toEqual([0, 1, 2]);
      expect(await jobsOf(h, loopOwner.organizationId, cus.id)).toHaveLength(4);
    });

    it('two workers at once (leases off) still do each action exactly once', async () => {
      const busyOwner = await newTenant(h);
      const cus = await createCustomer(h, busyOwner);
      const wf = await defineWorkflow(busyOwner, {
        name: 'three_jobs',
        trigger: { event: 'invoice.created' },
        actions: [
          { type: 'create_job', title: 'One', daysFromNow: 1 },
          { type: 'create_job', title: 'Two', daysFromNow: 2 },
          { type: 'create_job', title: 'Three', daysFromNow: 3 },
        ],
      });
      await invoice(busyOwner, cus.id, 50);
      await invoice(busyOwner, cus.id, 60);
      await Promise.all([drain(h), drain(h), drain(h)]);
      const runs = await runsOf(h, wf.id);
      expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      const titles = (await jobsOf(h, busyOwner.organizationId, cus.id)).map((j) => j.services[0]).sort();
      expect(titles).toEqual(['One', 'One', 'Three', 'Three', 'Two', 'Two']);
    });

    it('crash safety: a run resumed after a crash between actions does each action once', async () => {
      const crashOwner = await newTenant(h);
      const cus = await createCustomer(h, crashOwner);
      const wf = await defineWorkflow(crashOwner, {
        name: 'crashy',
        trigger: { event: 'invoice.created' },
        conditions: [{ field: 'amountDue', op: 'eq', value: 321 }],
        actions: [
          { type: 'create_job', title: 'Visit', daysFromNow: 2 },
          tagAction('crashed'),
          { type: 'create_job', title: 'Second visit', daysFromNow: 9 },
        ],
      });
      await invoice(crashOwner, cus.id, 321);
      let crashes = 0;
      const afterAction = (_runId: string, index: number) => {
        // Dies right after the first and again after the second action committed.
        if (index === crashes && crashes < 2) {
          crashes++;
          throw new Error(`simulated crash after action ${index}`);
        }
      };
      await expect(drain(h, { afterAction })).rejects.toThrow('simulated crash after action 0');
      let [run] = await runsOf(h, wf.id);
      expect(run?.status).toBe('pending');
      expect(run?.actions).toHaveLength(1);
      await expect(drain(h, { afterAction })).rejects.toThrow('simulated crash after action 1');
      await drain(h, { afterAction });
      [run] = await runsOf(h, wf.id);
      expect(run?.status).toBe('succeeded');
      const results = (run?.actions ?? []) as Array<{ status: string }>;
      expect(results.map((a) => a.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      const created = await jobsOf(h, crashOwner.organizationId, cus.id);
      expect(created.map((j) => j.services)).toEqual([['Visit'], ['Second visit']]);
      expect((await tagsOf(h, cus.id)).filter((t) => t === 'crashed')).toHaveLength(1);
      const updates = (await eventsOf(h, crashOwner.organizationId)).filter((e) => e.type === 'customer.updated');
      expect(updates.map((e) => e.depth)).toEqual([1]);

      // The trigger seen again (at-least-once discovery) records no second run.
      const triggerId = run?.eventId as string;
      const [trigger] = await h.admin.db.select({ tx: events.tx }).from(events).where(eq(events.id, triggerId));
      await h.admin.db
        .insert(workflowEventBatches)
        .values({ tx: trigger?.tx as number, organizationId: crashOwner.organizationId });
      await drain(h);
      expect(await runsOf(h, wf.id)).toHaveLength(1);
      expect(await jobsOf(h, crashOwner.organizationId, cus.id)).toHaveLength(2);
    });
  });
});
