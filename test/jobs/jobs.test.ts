import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobActivity, jobs } from '../../src/db/schema/index.js';
import { JOB_TRIGGER_TO, jobMachine } from '../../src/modules/jobs/jobs.states.js';
import { canTake } from '../../src/platform/state-machine.js';
import { createCustomer, createProperty, eventsOf, insertJob } from '../factories.js';
import { addMember, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';

describe('jobs', () => {
  let h: Harness;
  let owner: TestUser;
  let crew: TestUser;
  let customerId: string;
  let propertyId: string;

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
    crew = await addMember(h, owner, 'member');
    customerId = (await createCustomer(h, owner)).id;
    propertyId = (await createProperty(h, owner, customerId)).id;
  });
  afterAll(async () => h?.close());

  const jobCount = async (orgId: string) =>
    Number((await h.admin.db.select({ n: count() }).from(jobs).where(eq(jobs.organizationId, orgId)))[0]?.n);

  it('schedules a job with a checklist, emits job.created, and returns checklist and activity', async () => {
    const before = (await eventsOf(h, owner.organizationId)).length;
    const res = await owner.call('POST', '/api/jobs', {
      customerId,
      propertyId,
      scheduledDate: '2026-05-04',
      services: ['Mowing', 'Edging'],
      assignedTo: [crew.userId],
      notes: 'Gate code 1234',
      checklist: ['Mow front', 'Mow back'],
    });
    expect(res.statusCode).toBe(201);
    const job = res.json().data;
    expect(job).toMatchObject({
      customerId,
      propertyId,
      status: 'scheduled',
      scheduledDate: '2026-05-04',
      services: ['Mowing', 'Edging'],
      assignedTo: [crew.userId],
      notes: 'Gate code 1234',
    });
    expect(job.id).toMatch(/^job_/);
    expect(job.checklist.map((c: { text: string; completed: boolean }) => [c.text, c.completed])).toEqual([
      ['Mow front', false],
      ['Mow back', false],
    ]);
    expect(job.activity).toHaveLength(1);
    expect(job.activity[0]).toMatchObject({ type: 'created', actorId: owner.userId });
    const evts = (await eventsOf(h, owner.organizationId)).slice(before);
    expect(evts.map((e) => e.type)).toEqual(['job.created']);
    expect(evts[0]?.data).toMatchObject({ jobId: job.id, job: { id: job.id, status: 'scheduled' } });

    const got = await owner.call('GET', `/api/jobs/${job.id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json().data.checklist).toHaveLength(2);
  });

  it('refuses bad input with a clear 400, writing nothing and emitting nothing', async () => {
    const other = await newTenant(h, { name: 'Other' });
    const foreignCustomer = await createCustomer(h, other);
    const foreignProperty = await createProperty(h, other, foreignCustomer.id);
    const outsider = await newTenant(h, { name: 'Outsider' });
    const ownProperty2 = await createProperty(h, owner, (await createCustomer(h, owner)).id);
    const cases: Array<[unknown, string]> = [
      [{ scheduledDate: '2026-05-04' }, 'customerId'],
      [{ customerId }, 'scheduledDate'],
      [{ customerId: 'cus_missing', scheduledDate: '2026-05-04' }, 'customerId'],
      [{ customerId: foreignCustomer.id, scheduledDate: '2026-05-04' }, 'customerId'],
      [{ customerId, scheduledDate: '2026-05-04', propertyId: foreignProperty.id }, 'propertyId'],
      [{ customerId, scheduledDate: '2026-05-04', propertyId: ownProperty2.id }, 'propertyId'],
      [{ customerId, scheduledDate: '2026-05-04', assignedTo: [outsider.userId] }, 'assignedTo'],
      [{ customerId, scheduledDate: '2026-05-04', assignedTo: ['usr_nobody'] }, 'assignedTo'],
      [{ customerId, scheduledDate: '2026-02-30' }, 'scheduledDate'],
      [{ customerId, scheduledDate: '05/04/2026' }, 'scheduledDate'],
      [{ customerId, scheduledDate: '2026-05-04', status: 'completed' }, 'status'],
      [{ customerId, scheduledDate: '2026-05-04', services: 'Mowing' }, 'services'],
      [{ customerId, scheduledDate: '2026-05-04', checklist: ['  '] }, 'checklist'],
      [{ customerId, scheduledDate: '2026-05-04', surprise: true }, 'surprise'],
    ];
    const eventsBefore = (await eventsOf(h, owner.organizationId)).length;
    const jobsBefore = await jobCount(owner.organizationId);
    for (const [body, field] of cases) {
      const res = await owner.call('POST', '/api/jobs', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
      expect(
        res
          .json()
          .error.details.map((d: { field: string }) => d.field)
          .join(' '),
        JSON.stringify(body),
      ).toContain(field);
    }
    expect(await jobCount(owner.organizationId)).toBe(jobsBefore);
    expect((await eventsOf(h, owner.organizationId)).length).toBe(eventsBefore);
  });

  describe('status transitions (driven from the table)', () => {
    const targets = ['scheduled', 'in_progress', 'on_hold', 'completed', 'canceled'] as const;
    const sources = jobMachine.states;
    for (const from of sources) {
      for (const to of targets) {
        const allowed = canTake(jobMachine, from, JOB_TRIGGER_TO[to]);
        it(`${from} → ${to}: ${allowed ? 'allowed' : '409'}`, async () => {
          const job = await insertJob(h, owner, customerId, from);
          const before = (await eventsOf(h, owner.organizationId)).length;
          const res = await owner.call('PUT', `/api/jobs/${job.id}`, { status: to });
          const evts = (await eventsOf(h, owner.organizationId)).slice(before);
          if (!allowed) {
            expect(res.statusCode).toBe(409);
            expect(res.json().error.code).toBe('INVALID_STATE');
            expect(evts).toHaveLength(0);
            const [row] = await h.admin.db.select().from(jobs).where(eq(jobs.id, job.id));
            expect(row?.status).toBe(from);
            const acts = await h.admin.db.select().from(jobActivity).where(eq(jobActivity.jobId, job.id));
            expect(acts).toHaveLength(0);
            return;
          }
          expect(res.statusCode).toBe(200);
          const body = res.json().data;
          expect(body.status).toBe(to);
          expect(body.activity.at(-1)).toMatchObject({ type: 'status_changed', actorId: owner.userId });
          const specific = to === 'completed' ? ['job.completed'] : to === 'canceled' ? ['job.cancelled'] : [];
          expect(evts.map((e) => e.type).sort()).toEqual([...specific, 'job.status_changed'].sort());
          for (const e of evts) {
            expect(e.data).toMatchObject({
              jobId: job.id,
              oldStatus: from.toUpperCase(),
              newStatus: to.toUpperCase(),
              job: { id: job.id, status: to },
            });
          }
        });
      }
    }
  });

  it('draft: no event on create, publish → scheduled with job.created, publish twice → 409', async () => {
    const before = (await eventsOf(h, owner.organizationId)).length;
    const res = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: '2026-07-01', draft: true });
    expect(res.statusCode).toBe(201);
    const id = res.json().data.id;
    expect(res.json().data.status).toBe('draft');
    expect((await eventsOf(h, owner.organizationId)).length).toBe(before);
    const pub = await owner.call('POST', `/api/jobs/${id}/publish`);
    expect(pub.statusCode).toBe(200);
    expect(pub.json().data.status).toBe('scheduled');
    expect(pub.json().data.activity.map((a: { type: string }) => a.type)).toEqual(['created', 'published']);
    const evts = (await eventsOf(h, owner.organizationId)).slice(before);
    expect(evts.map((e) => e.type)).toEqual(['job.created']);
    expect(evts[0]?.data).toMatchObject({ jobId: id, job: { status: 'scheduled' } });
    const again = await owner.call('POST', `/api/jobs/${id}/publish`, {});
    expect(again.statusCode).toBe(409);
    expect((await eventsOf(h, owner.organizationId)).length).toBe(before + 1);
  });

  it('records an activity entry for every change and refuses edits of final jobs', async () => {
    const created = await owner.call('POST', '/api/jobs', {
      customerId,
      scheduledDate: '2026-05-10',
      checklist: ['A'],
    });
    const id = created.json().data.id;
    const itemId = created.json().data.checklist[0].id;
    const upd = await owner.call('PUT', `/api/jobs/${id}`, {
      scheduledDate: '2026-05-11',
      assignedTo: [crew.userId],
      notes: 'Bring the trimmer',
    });
    expect(upd.statusCode).toBe(200);
    expect(upd.json().data).toMatchObject({ scheduledDate: '2026-05-11', assignedTo: [crew.userId] });
    const tick = await owner.call('PATCH', `/api/jobs/${id}/checklist/${itemId}`, { completed: true });
    expect(tick.statusCode).toBe(200);
    expect(tick.json().data.checklist[0].completed).toBe(true);
    expect(tick.json().data.checklist[0].completedAt).toBeTruthy();
    const same = await owner.call('PATCH', `/api/jobs/${id}/checklist/${itemId}`, { completed: true });
    expect(same.json().data.activity).toHaveLength(tick.json().data.activity.length);
    const untick = await owner.call('PATCH', `/api/jobs/${id}/checklist/${itemId}`, { completed: false });
    expect(untick.json().data.checklist[0]).toMatchObject({ completed: false, completedAt: null });
    await owner.call('PUT', `/api/jobs/${id}`, { status: 'completed' });
    const detail = (await owner.call('GET', `/api/jobs/${id}`)).json().data;
    expect(detail.activity.map((a: { type: string }) => a.type)).toEqual([
      'created',
      'rescheduled',
      'assigned',
      'notes_updated',
      'checklist_item_completed',
      'checklist_item_uncompleted',
      'status_changed',
    ]);
    // Final: only notes may change; the checklist is frozen.
    expect((await owner.call('PUT', `/api/jobs/${id}`, { scheduledDate: '2026-05-12' })).statusCode).toBe(409);
    expect((await owner.call('PATCH', `/api/jobs/${id}/checklist/${itemId}`, { completed: true })).statusCode).toBe(
      409,
    );
    expect((await owner.call('PUT', `/api/jobs/${id}`, { notes: 'Done, all good' })).statusCode).toBe(200);
    expect((await owner.call('PATCH', `/api/jobs/${id}/checklist/chk_missing`, { completed: true })).statusCode).toBe(
      404,
    );
    // A member outside the organization cannot be assigned on update either.
    const outsider = await newTenant(h, { name: 'Outsider 2' });
    const other = await owner.call('POST', '/api/jobs', { customerId, scheduledDate: '2026-05-10' });
    const bad = await owner.call('PUT', `/api/jobs/${other.json().data.id}`, { assignedTo: [outsider.userId] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details[0].field).toBe('assignedTo');
    expect((await owner.call('PUT', `/api/jobs/${other.json().data.id}`, { status: 'paused' })).statusCode).toBe(400);
  });

  it('applies one of two simultaneous final moves and refuses the other', async () => {
    const job = await insertJob(h, owner, customerId, 'in_progress');
    const before = (await eventsOf(h, owner.organizationId)).length;
    const results = await Promise.all(
      ['completed', 'canceled'].map((status) => owner.call('PUT', `/api/jobs/${job.id}`, { status })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    const winner = results.find((r) => r.statusCode === 200)?.json().data.status;
    const evts = (await eventsOf(h, owner.organizationId)).slice(before);
    expect(evts.map((e) => e.type).sort()).toEqual(
      [winner === 'completed' ? 'job.completed' : 'job.cancelled', 'job.status_changed'].sort(),
    );
  });

  it('deletes any job but a completed one', async () => {
    const done = await insertJob(h, owner, customerId, 'completed');
    const del = await owner.call('DELETE', `/api/jobs/${done.id}`);
    expect(del.statusCode).toBe(409);
    expect(del.json().error.code).toBe('INVALID_STATE');
    for (const status of ['draft', 'scheduled', 'in_progress', 'on_hold', 'canceled']) {
      const job = await insertJob(h, owner, customerId, status);
      const res = await owner.call('DELETE', `/api/jobs/${job.id}`);
      expect(res.statusCode, status).toBe(204);
      expect(res.body).toBe('');
      expect((await owner.call('GET', `/api/jobs/${job.id}`)).statusCode).toBe(404);
    }
  });
});

describe('job lists and calendar in a non-UTC timezone', () => {
  let h: Harness;
  let owner: TestUser;
  let crew: TestUser;
  let c1: string;
  let c2: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h, { timezone: 'America/Chicago' });
    crew = await addMember(h, owner, 'member');
    c1 = (await createCustomer(h, owner)).id;
    c2 = (await createCustomer(h, owner, { firstName: 'Lee' })).id;
    const plan: Array<[string, string, string, string[]]> = [
      ['a', c1, '2026-03-01', []],
      ['b', c1, '2026-03-02', [crew.userId]],
      ['c', c2, '2026-03-02', []],
      ['d', c2, '2026-03-05', [crew.userId, owner.userId]],
      ['e', c1, '2026-06-01', []],
    ];
    for (const [key, customerId, scheduledDate, assignedTo] of plan) {
      const res = await owner.call('POST', '/api/jobs', { customerId, scheduledDate, assignedTo });
      ids[key] = res.json().data.id;
    }
    await owner.call('PUT', `/api/jobs/${ids.c}`, { status: 'in_progress' });
  });
  afterAll(async () => h?.close());

  const keys = (data: Array<{ id: string }>) => data.map((j) => Object.keys(ids).find((k) => ids[k] === j.id)).join('');
  const list = async (query: Record<string, string>) => {
    const res = await owner.call('GET', '/api/jobs', undefined, { query });
    expect(res.statusCode, JSON.stringify(query) + res.body).toBe(200);
    return res;
  };

  it('orders by scheduledDate and paginates with X-Total-Count and Link', async () => {
    expect(keys((await list({})).json().data)).toBe('abcde');
    const p2 = await list({ limit: '2', page: '2', includeTotal: 'true' });
    expect(keys(p2.json().data)).toBe('cd');
    expect(p2.headers['x-total-count']).toBe('5');
    expect(String(p2.headers.link)).toContain('rel="next"');
  });

  it('filters by status, customer and assignee', async () => {
    expect(keys((await list({ status: 'in_progress' })).json().data)).toBe('c');
    expect(keys((await list({ customerId: c2 })).json().data)).toBe('cd');
    expect(keys((await list({ assignedTo: crew.userId })).json().data)).toBe('bd');
    expect(keys((await list({ assignedTo: owner.userId })).json().data)).toBe('d');
    expect((await owner.call('GET', '/api/jobs?status=paused')).statusCode).toBe(400);
  });

  it('date-only bounds are whole days, end inclusive, with from/to aliases', async () => {
    expect(keys((await list({ startDate: '2026-03-02', endDate: '2026-03-05' })).json().data)).toBe('bcd');
    expect(keys((await list({ from: '2026-03-02', to: '2026-03-02' })).json().data)).toBe('bc');
    // startDate wins over from, endDate over to.
    expect(
      keys(
        (await list({ startDate: '2026-03-05', from: '2026-01-01', endDate: '2026-03-05', to: '2026-12-31' })).json()
          .data,
      ),
    ).toBe('d');
  });

  it('date-time bounds fall on their calendar date in the organization timezone', async () => {
    // 2026-03-02T03:00Z is still March 1st in Chicago (UTC−6): the range starts on the 1st.
    expect(keys((await list({ startDate: '2026-03-02T03:00:00Z', endDate: '2026-03-02T03:00:00Z' })).json().data)).toBe(
      'a',
    );
    // 2026-03-02T12:00Z is March 2nd in Chicago.
    expect(keys((await list({ from: '2026-03-02T12:00:00Z', to: '2026-03-06T05:59:00Z' })).json().data)).toBe('bcd');
  });

  it('refuses bad dates and an end before the start', async () => {
    const queries: Array<Record<string, string>> = [
      { startDate: '2026-13-01' },
      { endDate: 'yesterday' },
      { from: '2026-02-30' },
      { startDate: '2026-03-05', endDate: '2026-03-04' },
      { from: '2026-03-05', to: '2026-03-01' },
    ];
    for (const query of queries) {
      const res = await owner.call('GET', '/api/jobs', undefined, { query });
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
  });

  it('groups the calendar by date, ascending, only dates with jobs', async () => {
    const res = await owner.call('GET', '/api/jobs/calendar?startDate=2026-03-01&endDate=2026-03-31');
    expect(res.statusCode).toBe(200);
    const days = res.json().data as Array<{ date: string; jobs: Array<{ id: string }> }>;
    expect(days.map((d) => d.date)).toEqual(['2026-03-01', '2026-03-02', '2026-03-05']);
    expect(days.map((d) => keys(d.jobs))).toEqual(['a', 'bc', 'd']);
    const mine = await owner.call(
      'GET',
      `/api/jobs/calendar?startDate=2026-03-01&endDate=2026-03-31&assignedTo=${crew.userId}`,
    );
    expect(mine.json().data.map((d: { date: string }) => d.date)).toEqual(['2026-03-02', '2026-03-05']);
    const empty = await owner.call('GET', '/api/jobs/calendar?startDate=2026-04-01&endDate=2026-04-30');
    expect(empty.json().data).toEqual([]);
  });

  it('shows each job on the calendar exactly as the list shows it, every field and instant', async () => {
    // The calendar reads its rows without the ORM's mapping (jobs.service.ts): same view, built by hand.
    const edited = await owner.call('PUT', `/api/jobs/${ids.d}`, {
      startTime: '08:30',
      durationMinutes: 90,
      notes: 'Gate code 4411',
      lineItems: [{ description: 'Edging', quantity: 0.333, unitPrice: 10.05 }],
    });
    expect(edited.statusCode, edited.body).toBe(200);
    const listed = (await list({ startDate: '2026-03-01', endDate: '2026-03-31' })).json().data;
    const res = await owner.call('GET', '/api/jobs/calendar?startDate=2026-03-01&endDate=2026-03-31');
    const onCalendar = (res.json().data as Array<{ jobs: unknown[] }>).flatMap((d) => d.jobs);
    expect(onCalendar).toEqual(listed);
    expect(onCalendar.find((j) => (j as { id: string }).id === ids.d)).toMatchObject({
      total: 3.35,
      startTime: '08:30',
    });
  });

  it('calendar bounds: 92 days inclusive pass, 93 fail; both required; end not before start', async () => {
    // 2026-03-01 .. 2026-05-31 is 92 days counting both ends.
    expect((await owner.call('GET', '/api/jobs/calendar?startDate=2026-03-01&endDate=2026-05-31')).statusCode).toBe(
      200,
    );
    const bad = [
      'startDate=2026-03-01&endDate=2026-06-01',
      'startDate=2026-03-01',
      'endDate=2026-03-01',
      '',
      'startDate=2026-03-05&endDate=2026-03-04',
      'startDate=2026-02-30&endDate=2026-03-04',
    ];
    for (const q of bad) {
      const res = await owner.call('GET', `/api/jobs/calendar?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error.code, q).toBe('VALIDATION_FAILED');
    }
    // A single day is a valid range.
    const one = await owner.call('GET', '/api/jobs/calendar?startDate=2026-03-02&endDate=2026-03-02');
    expect(one.json().data).toHaveLength(1);
  });
});
