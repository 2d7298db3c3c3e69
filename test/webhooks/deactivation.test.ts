import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../src/background/runner.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { awaitingFanOut, emitEvents, type Receiver, startReceiver, startWorker, waitFor } from './helpers.js';

/*
 * Spec 3.6: an endpoint is deactivated when its consecutive failed deliveries reach 10.
 * A delivery fails when its last attempt fails and it becomes dead (decisions §5); any
 * successful attempt resets the count. Five attempts per delivery (four short retries).
 */
describe('webhook endpoint deactivation by consecutive failed deliveries', () => {
  let h: Harness;
  let owner: TestUser;
  let worker: RunningWorker;
  const receivers: Receiver[] = [];
  /** Requests the receiver is holding open (event data `hold: true`) until the test answers them. */
  const held: ServerResponse[] = [];
  /** Dozens of attempts each: generous bounds for a loaded machine (never a timing assertion). */
  const LONG = 100_000;

  beforeAll(async () => {
    h = await createHarness({ WEBHOOK_RETRY_SCHEDULE: '20ms,20ms,20ms,20ms' });
    owner = await newTenant(h);
    worker = startWorker(h.database, h.config, { perEndpoint: 2 });
  });
  afterAll(async () => {
    for (const res of held) res.writeHead(500).end();
    await worker?.stop();
    for (const r of receivers) await r.close();
    await h?.close();
  });

  /**
   * A workflow event: its data is free-form (the catalog's is checked against /openapi.json),
   * so each event can tell the receiver how to answer.
   */
  const PROBE = 'workflow.deactivation_probe';
  /** Answers 200 to events with `ok: true`, holds those with `hold: true`, and 500 to the rest. */
  const receiver = async () => {
    const r = await startReceiver((req, res) => {
      const data = JSON.parse(req.body).data as { ok?: boolean; hold?: boolean };
      if (data.hold) held.push(res);
      else res.writeHead(data.ok ? 200 : 500).end(data.ok ? 'ok' : 'boom');
    });
    receivers.push(r);
    return r;
  };
  const register = async (url: string) => {
    const res = await owner.call('POST', '/api/webhooks', { url, events: [PROBE] });
    expect(res.statusCode).toBe(201);
    return res.json().data as { id: string };
  };
  type Delivery = { id: string; status: string; attempts: number; lastError: string | null };
  const deliveries = async (endpointId: string) =>
    (await owner.call('GET', `/api/webhooks/${endpointId}/deliveries`, undefined, { query: { limit: '100' } })).json()
      .data as Delivery[];
  const endpoint = async (id: string) => (await owner.call('GET', `/api/webhooks/${id}`)).json().data;
  const emit = (list: Array<Record<string, unknown>>) =>
    emitEvents(
      h.database,
      owner.organizationId,
      list.map((data) => ({ type: PROBE, data })),
    );
  /** Waits until the endpoint has `n` deliveries, none of them pending or failed (retry scheduled). */
  const settled = (endpointId: string, n: number) =>
    waitFor(
      async () => {
        const l = await deliveries(endpointId);
        return l.length === n && l.every((d) => d.status === 'dead' || d.status === 'succeeded') ? l : null;
      },
      `${n} settled deliveries`,
      LONG,
    );
  const failing = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ n: from + i }));

  it('two dead deliveries (ten failed attempts) leave the endpoint active', async () => {
    const r = await receiver();
    const ep = await register(r.url);
    await emit(failing(2));
    const list = await settled(ep.id, 2);
    expect(list.map((d) => [d.status, d.attempts])).toEqual([
      ['dead', 5],
      ['dead', 5],
    ]);
    expect(r.received).toHaveLength(10);
    expect(await endpoint(ep.id)).toMatchObject({ active: true, consecutiveFailures: 2, deactivatedAt: null });
  }, 120_000);

  it('a failed attempt with retries left does not count; its later success resets the count', async () => {
    let failFirst = true;
    const r = await startReceiver((_req, res) => {
      res.writeHead(failFirst ? 500 : 200).end();
      failFirst = false;
    });
    receivers.push(r);
    const ep = await register(r.url);
    await emit(failing(1));
    await settled(ep.id, 1);
    expect(r.received).toHaveLength(2);
    expect((await endpoint(ep.id)).consecutiveFailures).toBe(0);
  }, 120_000);

  it('one success between dead deliveries resets the count; ten dead in a row deactivate the endpoint', async () => {
    const r = await receiver();
    const ep = await register(r.url);
    await emit(failing(5));
    await settled(ep.id, 5);
    expect(await endpoint(ep.id)).toMatchObject({ active: true, consecutiveFailures: 5 });

    await emit([{ ok: true }]);
    await settled(ep.id, 6);
    expect(await endpoint(ep.id)).toMatchObject({ active: true, consecutiveFailures: 0 });

    // Five before the success plus nine after would be fourteen: only the nine count.
    await emit(failing(9, 100));
    await settled(ep.id, 15);
    expect(await endpoint(ep.id)).toMatchObject({ active: true, consecutiveFailures: 9, deactivatedAt: null });

    // The tenth dead delivery in a row deactivates it. A second delivery is held open by the
    // receiver meanwhile, so it is still pending when the endpoint is deactivated.
    await emit([{ hold: true }, { n: 200 }]);
    const e = await waitFor(
      async () => {
        const x = await endpoint(ep.id);
        return x.active ? null : x;
      },
      'deactivation',
      LONG,
    );
    expect(e.consecutiveFailures).toBe(10);
    expect(e.deactivatedAt).toEqual(expect.any(String));
    for (const res of held.splice(0)) res.writeHead(500).end();
    const all = await settled(ep.id, 17);
    expect(all.filter((d) => d.status === 'succeeded')).toHaveLength(1);
    expect(all.filter((d) => d.status === 'dead' && d.attempts === 5)).toHaveLength(15);
    // The held delivery was pending when the endpoint went: dead without an attempt counted.
    const [pending] = all.filter((d) => d.attempts === 0);
    expect(pending).toMatchObject({
      status: 'dead',
      lastError: 'Endpoint deactivated after 10 consecutive failed deliveries',
    });
    // Its late answer does not count either.
    expect((await endpoint(ep.id)).consecutiveFailures).toBe(10);

    // Deactivated: new events are not fanned out to it, and a test send is refused.
    const [later] = await emit([{ n: 300 }]);
    await waitFor(
      async () => !(await awaitingFanOut(h.admin.db, later?.id as string)),
      'fan-out of the later event',
      LONG,
    );
    expect(await deliveries(ep.id)).toHaveLength(17);
    expect((await owner.call('POST', `/api/webhooks/${ep.id}/test`)).statusCode).toBe(409);

    // Re-enabling resets the count, and deliveries flow again.
    const en = await owner.call('POST', `/api/webhooks/${ep.id}/enable`, {});
    expect(en.statusCode).toBe(200);
    expect(en.json().data).toMatchObject({ active: true, consecutiveFailures: 0, deactivatedAt: null });
    await emit([{ ok: true }]);
    const after = await settled(ep.id, 18);
    expect(after.filter((d) => d.status === 'succeeded')).toHaveLength(2);
  }, 240_000);
});
