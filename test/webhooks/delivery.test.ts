import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningWorker } from '../../src/background/runner.js';
import { createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { emitEvents, ok200, RETRY_ENV, type Receiver, startReceiver, startWorker, waitFor } from './helpers.js';

/** Stripe's public verifier: throws unless a v1 matches within 300 s. */
const stripeVerify = (body: string, header: string, secret: string) => {
  Stripe.webhooks.constructEvent(body, header, secret, 300);
  return true;
};

describe('webhook delivery', () => {
  let h: Harness;
  let owner: TestUser;
  let worker: RunningWorker;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    h = await createHarness(RETRY_ENV);
    owner = await newTenant(h);
    // timeoutMs 2 s keeps the time-out test short.
    worker = startWorker(h.database, h.config, { timeoutMs: 2000, perEndpoint: 1 });
  });
  afterAll(async () => {
    await worker?.stop();
    for (const r of receivers) await r.close();
    await h?.close();
  });

  const receiver = async (respond = ok200) => {
    const r = await startReceiver(respond);
    receivers.push(r);
    return r;
  };
  const register = async (url: string, events: string[]) => {
    const res = await owner.call('POST', '/api/webhooks', { url, events });
    expect(res.statusCode).toBe(201);
    return res.json().data as { id: string; secret: string };
  };
  const deliveries = async (endpointId: string, status?: string) =>
    (
      await owner.call('GET', `/api/webhooks/${endpointId}/deliveries`, undefined, {
        query: status ? { status } : {},
      })
    ).json().data as Array<{ id: string; status: string; event: string; attempts: number }>;
  const detail = async (id: string) => (await owner.call('GET', `/api/webhook-deliveries/${id}`)).json().data;
  const endpoint = async (id: string) => (await owner.call('GET', `/api/webhooks/${id}`)).json().data;

  it('delivers a transition as specific + status_changed, with every header, verifiable by Stripe and Standard Webhooks', async () => {
    const r = await receiver();
    const ep = await register(r.url, ['invoice.paid', 'invoice.status_changed']);
    const emitted = await emitEvents(h.database, owner.organizationId, [
      {
        type: 'invoice.paid',
        data: { invoiceId: 'inv_1', invoiceNumber: 'INV-000001', oldStatus: 'SENT', newStatus: 'PAID', amountDue: 0 },
      },
      {
        type: 'invoice.status_changed',
        data: { invoiceId: 'inv_1', invoiceNumber: 'INV-000001', oldStatus: 'SENT', newStatus: 'PAID', amountDue: 0 },
      },
      { type: 'customer.created', data: { customerId: 'cus_1' } }, // not subscribed
    ]);
    await waitFor(() => r.received.length >= 2, 'two deliveries');
    const list = await waitFor(async () => {
      const l = await deliveries(ep.id, 'succeeded');
      return l.length === 2 ? l : null;
    }, 'succeeded status');
    expect(r.received.map((x) => x.headers['x-service-event']).sort()).toEqual([
      'invoice.paid',
      'invoice.status_changed',
    ]);
    for (const got of r.received) {
      const body = JSON.parse(got.body);
      expect(got.headers['content-type']).toBe('application/json');
      expect(got.headers['user-agent']).toBe('Service-Webhooks/1.0');
      expect(got.headers['x-service-delivery']).toBe(body.id);
      expect(got.headers['webhook-id']).toBe(body.id);
      expect(body.id).toMatch(/^dlv_/);
      expect(list.map((d) => d.id)).toContain(body.id);
      expect(got.headers['x-service-event']).toBe(body.event);
      expect(Object.keys(body)).toEqual(['id', 'event', 'timestamp', 'organizationId', 'data']);
      expect(body.timestamp).toBe(emitted.find((e) => e.type === body.event)?.createdAt.toISOString());
      expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(body.organizationId).toBe(owner.organizationId);
      expect(body.data).toMatchObject({
        invoiceId: 'inv_1',
        invoiceNumber: 'INV-000001',
        oldStatus: 'SENT',
        newStatus: 'PAID',
        amountDue: 0,
      });
      const sig = String(got.headers['x-service-signature']);
      expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(Number(got.headers['webhook-timestamp'])).toBe(Number(sig.slice(2, sig.indexOf(','))));
      expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      expect(String(got.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(stripeVerify(got.body, sig, ep.secret)).toBe(true);
      expect(new Webhook(ep.secret).verify(got.body, got.headers as Record<string, string>)).toEqual(body);
      // A tampered body fails both verifiers.
      const tampered = got.body.replace('INV-000001', 'INV-000002');
      expect(() => stripeVerify(tampered, sig, ep.secret)).toThrow();
      expect(() => new Webhook(ep.secret).verify(tampered, got.headers as Record<string, string>)).toThrow();
    }
    const d = await detail(list[0]?.id as string);
    expect(d).toMatchObject({ status: 'succeeded', attempts: 1, lastStatusCode: 200, lastError: null });
    expect(d.attemptLog).toHaveLength(1);
    expect(d.attemptLog[0]).toMatchObject({ statusCode: 200, error: null, responseBody: 'ok' });
    expect(d.attemptLog[0].durationMs).toBeGreaterThanOrEqual(0);
    expect(d.payload.id).toBe(d.id);
  });

  it('retries with the same delivery id and a freshly signed timestamp', async () => {
    const r = await receiver((_req, res, n) => {
      if (n === 1)
        setTimeout(() => res.writeHead(500).end('boom'), 1000); // the next attempt lands in a later second
      else if (n === 2) res.writeHead(503).end('busy');
      else res.writeHead(204).end();
    });
    const ep = await register(r.url, ['customer.updated']);
    await emitEvents(h.database, owner.organizationId, [{ type: 'customer.updated', data: { customerId: 'cus_2' } }]);
    const [dl] = await waitFor(async () => {
      const l = await deliveries(ep.id, 'succeeded');
      return l.length === 1 ? l : null;
    }, 'delivery to succeed');
    expect(r.received).toHaveLength(3);
    const ids = new Set(r.received.map((x) => x.headers['x-service-delivery']));
    expect([...ids]).toEqual([dl?.id]);
    expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
    const ts = r.received.map((x) => Number(x.headers['webhook-timestamp']));
    expect(ts[1]).toBeGreaterThan(ts[0] as number);
    for (const got of r.received) {
      expect(stripeVerify(got.body, String(got.headers['x-service-signature']), ep.secret)).toBe(true);
      new Webhook(ep.secret).verify(got.body, got.headers as Record<string, string>);
    }
    const d = await detail(dl?.id as string);
    expect(d.attempts).toBe(3);
    expect(d.attemptLog.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 503, 204]);
    expect(d.attemptLog[0]).toMatchObject({ error: 'HTTP 500', responseBody: 'boom' });
    expect((await endpoint(ep.id)).consecutiveFailures).toBe(0);
  });

  it('treats a redirect as a failure and never follows it', async () => {
    const r = await receiver((req, res) => {
      if (req.url === '/hook') res.writeHead(302, { location: '/elsewhere' }).end();
      else res.writeHead(200).end();
    });
    const ep = await register(r.url, ['job.created']);
    await emitEvents(h.database, owner.organizationId, [{ type: 'job.created', data: { jobId: 'job_1' } }]);
    const [dl] = await waitFor(async () => {
      const l = await deliveries(ep.id, 'dead');
      return l.length === 1 ? l : null;
    }, 'delivery to die');
    expect(r.received.map((x) => x.url)).toEqual(['/hook', '/hook', '/hook', '/hook', '/hook']);
    const d = await detail(dl?.id as string);
    expect(d.attemptLog).toHaveLength(5);
    expect(d.attemptLog[0].statusCode).toBe(302);
    expect(d.attemptLog[0].error).toContain('Redirect 302 not followed');
  });

  it('times out a stalling receiver without holding up other endpoints', async () => {
    const stall = await receiver(() => {}); // never answers
    const fast = await receiver();
    const slowEp = await register(stall.url, ['job.completed']);
    const fastEp = await register(fast.url, ['job.completed']);
    await emitEvents(h.database, owner.organizationId, [{ type: 'job.completed', data: { jobId: 'job_2' } }]);
    await waitFor(async () => (await deliveries(fastEp.id, 'succeeded')).length === 1, 'fast endpoint');
    // The fast endpoint was served while the slow one was still waiting.
    expect(stall.received.length).toBeGreaterThanOrEqual(1);
    const [dl] = await waitFor(async () => {
      const l = await deliveries(slowEp.id);
      return l[0] && l[0].attempts >= 1 ? l : null;
    }, 'slow attempt to be logged');
    const d = await detail(dl?.id as string);
    expect(d.attemptLog[0]).toMatchObject({ statusCode: null, error: 'Timed out after 2000 ms' });
    await owner.call('DELETE', `/api/webhooks/${slowEp.id}`);
  });

  it('dead → requeue → delivered, with the same delivery id and the failure counter reset', async () => {
    let fail = true;
    const r = await receiver((_req, res) => res.writeHead(fail ? 500 : 200).end());
    const ep = await register(r.url, ['estimate.sent']);
    await emitEvents(h.database, owner.organizationId, [{ type: 'estimate.sent', data: { estimateId: 'est_1' } }]);
    const [dl] = await waitFor(async () => {
      const l = await deliveries(ep.id, 'dead');
      return l.length === 1 ? l : null;
    }, 'delivery to die');
    expect(dl?.attempts).toBe(5);
    expect(r.received).toHaveLength(5);
    // One failed delivery (five failed attempts) counts once (spec 3.6: failed deliveries).
    expect((await endpoint(ep.id)).consecutiveFailures).toBe(1);
    fail = false;
    const rq = await owner.call('POST', `/api/webhook-deliveries/${dl?.id}/requeue`);
    expect(rq.statusCode).toBe(200);
    expect(rq.json().data).toMatchObject({ id: dl?.id, attempts: 0 });
    await waitFor(async () => (await detail(dl?.id as string)).status === 'succeeded', 'requeued delivery');
    expect(r.received).toHaveLength(6);
    expect(new Set(r.received.map((x) => x.headers['x-service-delivery'])).size).toBe(1);
    const d = await detail(dl?.id as string);
    expect(d.attempts).toBe(1);
    expect(d.attemptLog).toHaveLength(6);
    expect((await endpoint(ep.id)).consecutiveFailures).toBe(0);
  });

  it('signs with new and previous secret during rotation; a second rotation drops the oldest', async () => {
    const r = await receiver();
    const ep = await register(r.url, ['contract.signed']);
    const first = ep.secret;
    const second = (await owner.call('POST', `/api/webhooks/${ep.id}/rotate-secret`)).json().data.secret as string;
    await emitEvents(h.database, owner.organizationId, [{ type: 'contract.signed', data: { contractId: 'con_1' } }]);
    await waitFor(() => r.received.length === 1, 'delivery after rotation');
    const a = r.received[0];
    const sigA = String(a?.headers['x-service-signature']);
    expect(sigA).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(String(a?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [first, second]) {
      expect(stripeVerify(a?.body as string, sigA, secret)).toBe(true);
      new Webhook(secret).verify(a?.body as string, a?.headers as Record<string, string>);
    }
    // New secret first: its v1 is the first one.
    const onlyFirstV1 = sigA.split(',').slice(0, 2).join(',');
    expect(stripeVerify(a?.body as string, onlyFirstV1, second)).toBe(true);

    const third = (await owner.call('POST', `/api/webhooks/${ep.id}/rotate-secret`)).json().data.secret as string;
    await emitEvents(h.database, owner.organizationId, [{ type: 'contract.signed', data: { contractId: 'con_2' } }]);
    await waitFor(() => r.received.length === 2, 'delivery after second rotation');
    const b = r.received[1];
    const sigB = String(b?.headers['x-service-signature']);
    for (const secret of [second, third]) {
      expect(stripeVerify(b?.body as string, sigB, secret)).toBe(true);
      new Webhook(secret).verify(b?.body as string, b?.headers as Record<string, string>);
    }
    expect(() => stripeVerify(b?.body as string, sigB, first)).toThrow();
    expect(() => new Webhook(first).verify(b?.body as string, b?.headers as Record<string, string>)).toThrow();
  });

  it('sends * every catalog event but workflow events only to endpoints naming them', async () => {
    const star = await receiver();
    const wf = await receiver();
    await register(star.url, ['*']);
    await register(wf.url, ['workflow.lead_scored']);
    await emitEvents(h.database, owner.organizationId, [
      { type: 'customer.created', data: { customerId: 'cus_9' } },
      { type: 'workflow.lead_scored', data: { score: 9 } },
      { type: 'workflow.other', data: {} },
    ]);
    await waitFor(() => star.received.length >= 1 && wf.received.length >= 1, 'both receivers');
    // Let any stray delivery arrive before asserting none did.
    await emitEvents(h.database, owner.organizationId, [{ type: 'invoice.sent', data: { invoiceId: 'inv_9' } }]);
    await waitFor(() => star.received.length >= 2, 'star receiver second event');
    expect(star.received.map((x) => x.headers['x-service-event'])).toEqual(['customer.created', 'invoice.sent']);
    expect(wf.received.map((x) => x.headers['x-service-event'])).toEqual(['workflow.lead_scored']);
  });

  it('keeps only the first 4 KiB of huge or garbage responses', async () => {
    const big = await receiver((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const pump = () => {
        while (sent < 200 && res.write(chunk)) sent++;
        if (sent < 200) res.once('drain', pump);
        else res.end();
      };
      pump();
    });
    const junk = await receiver((_req, res) => res.writeHead(500).end(Buffer.from([0, 1, 2, 0xff, 0xfe, 0x41, 0])));
    const bigEp = await register(big.url, ['bill.created']);
    const junkEp = await register(junk.url, ['bill.created']);
    await emitEvents(h.database, owner.organizationId, [{ type: 'bill.created', data: { billId: 'bil_1' } }]);
    const [bd] = await waitFor(async () => {
      const l = await deliveries(bigEp.id, 'succeeded');
      return l.length ? l : null;
    }, 'big response');
    const bigDetail = await detail(bd?.id as string);
    expect(bigDetail.attemptLog[0].responseBody).toBe('a'.repeat(4096));
    const [jd] = await waitFor(async () => {
      const l = await deliveries(junkEp.id);
      return l[0] && l[0].attempts >= 1 ? l : null;
    }, 'junk response');
    const junkDetail = await detail(jd?.id as string);
    expect(junkDetail.attemptLog[0].statusCode).toBe(500);
    expect(junkDetail.attemptLog[0].responseBody).not.toContain('\u0000');
    expect(junkDetail.attemptLog[0].responseBody).toContain('A');
    await owner.call('DELETE', `/api/webhooks/${junkEp.id}`);
  });

  it('sends a webhook.test delivery on request', async () => {
    const r = await receiver();
    const ep = await register(r.url, ['customer.deleted']);
    const res = await owner.call('POST', `/api/webhooks/${ep.id}/test`);
    expect(res.statusCode).toBe(200);
    await waitFor(() => r.received.length === 1, 'test delivery');
    const got = r.received[0];
    expect(got?.headers['x-service-event']).toBe('webhook.test');
    expect(JSON.parse(got?.body as string)).toMatchObject({ id: res.json().data.id, event: 'webhook.test' });
    expect(stripeVerify(got?.body as string, String(got?.headers['x-service-signature']), ep.secret)).toBe(true);
  });
});
