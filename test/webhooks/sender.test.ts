import { afterEach, describe, expect, it } from 'vitest';
import { createSender, EndpointPools, RESPONSE_CAPTURE_BYTES, type Sender } from '../../src/delivery/delivery.js';
import { deliveryBody } from '../../src/delivery/fanout.js';
import { type Receiver, type Responder, sampleEventData, startReceiver } from './helpers.js';

/**
 * The sender on its own, against receivers on 127.0.0.1: every way an attempt can end
 * (answer, refusal, redirect, huge or broken body, stall before or after the headers,
 * no connection to be had) settles once, with the status and error the attempt log shows.
 */
describe('createSender', () => {
  const receivers: Receiver[] = [];
  const senders: Sender[] = [];
  afterEach(async () => {
    await Promise.all(senders.splice(0).map((s) => s.close().catch(() => {})));
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });

  async function receiver(respond: Responder): Promise<string> {
    const r = await startReceiver(respond);
    receivers.push(r);
    return `${r.url}?x=1`;
  }
  function sender(timeoutMs = 2000, connectionsPerEndpoint = 4): Sender {
    const s = createSender({ allowPrivateTargets: true, timeoutMs, connectionsPerEndpoint });
    senders.push(s);
    return s;
  }
  const body = deliveryBody('dlv_1', 'job.created', new Date(), 'org_1', sampleEventData('job.created'));
  const attempt = (url: string) => ({ url, deliveryId: 'dlv_1', event: 'job.created', body, secrets: ['s'] });

  it('posts the body with its headers to the path and query, and keeps the answer', async () => {
    const url = await receiver((_req, res) => res.writeHead(201).end('thanks'));
    const r = await sender().send(attempt(url));
    expect(r).toMatchObject({ ok: true, statusCode: 201, error: null, responseBody: 'thanks', retryAfterMs: null });
    const [seen] = receivers[0]?.received ?? [];
    expect(seen?.url).toBe('/hook?x=1');
    expect(seen?.body).toBe(body);
    expect(seen?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-event': 'job.created',
      'x-service-delivery': 'dlv_1',
    });
    expect(seen?.headers['webhook-signature']).toMatch(/^v1,/);
  });

  it('reads a refusal, its Retry-After and a redirect without following it', async () => {
    const busy = await receiver((_req, res) => res.writeHead(503, { 'retry-after': '7' }).end('later'));
    const moved = await receiver((_req, res) => res.writeHead(301, { location: '/elsewhere' }).end());
    const s = sender();
    expect(await s.send(attempt(busy))).toMatchObject({
      ok: false,
      statusCode: 503,
      error: 'HTTP 503',
      responseBody: 'later',
      retryAfterMs: 7000,
    });
    expect(await s.send(attempt(moved))).toMatchObject({
      ok: false,
      statusCode: 301,
      error: 'Redirect 301 not followed (to /elsewhere)',
    });
  });

  it('keeps 4 KiB of a huge body, drops NUL bytes, and still reads the next answer', async () => {
    const url = await receiver((_req, res, n) => {
      if (n === 1) res.writeHead(200).end(Buffer.alloc(1024 * 1024, 0x61));
      else res.writeHead(200).end(Buffer.from([0x41, 0, 0x42]));
    });
    const s = sender();
    const big = await s.send(attempt(url));
    expect(big).toMatchObject({ ok: true, statusCode: 200 });
    expect(big.responseBody).toBe('a'.repeat(RESPONSE_CAPTURE_BYTES));
    expect((await s.send(attempt(url))).responseBody).toBe('AB');
  });

  it('times out a receiver that never answers, and one that stalls mid-body keeps its status', async () => {
    const silent = await receiver(() => {});
    const stalls = await receiver((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('part');
    });
    const s = sender(300);
    const [a, b] = await Promise.all([s.send(attempt(silent)), s.send(attempt(stalls))]);
    expect(a).toMatchObject({ ok: false, statusCode: null, error: 'Timed out after 300 ms', responseBody: null });
    expect(a.durationMs).toBeGreaterThanOrEqual(250);
    expect(b).toMatchObject({ ok: true, statusCode: 200, error: null });
    expect(b.responseBody).toBe('[response body unreadable: Timed out after 300 ms]');
  });

  it('times out an attempt still waiting for a connection, at its deadline', async () => {
    const silent = await receiver(() => {});
    const s = sender(300, 1);
    // One connection for the origin: the second attempt never gets onto the wire.
    const results = await Promise.all([s.send(attempt(silent)), s.send(attempt(silent))]);
    for (const r of results) expect(r).toMatchObject({ ok: false, statusCode: null, error: 'Timed out after 300 ms' });
    expect(Math.max(...results.map((r) => r.durationMs))).toBeLessThan(2000);
  });

  it('runs each attempt out at its own limit, whatever starts and finishes around it', async () => {
    const silent = await receiver(() => {});
    const quick = await receiver((_req, res) => {
      res.writeHead(204).end();
    });
    const s = sender(300, 8);
    const first = s.send(attempt(silent));
    const answered = await Promise.all(Array.from({ length: 5 }, () => s.send(attempt(quick))));
    await new Promise((r) => setTimeout(r, 150));
    // Started half-way through the first one's limit: it must not run out with it.
    const later = s.send(attempt(silent));
    const [a, b] = await Promise.all([first, later]);
    for (const r of answered) expect(r).toMatchObject({ ok: true, statusCode: 204 });
    for (const r of [a, b]) {
      expect(r).toMatchObject({ ok: false, statusCode: null, error: 'Timed out after 300 ms' });
      expect(r.durationMs).toBeGreaterThanOrEqual(300);
    }
  });

  it("gives each endpoint its own connections: one endpoint holding all of its own does not hold another's on the same host", async () => {
    const held: Array<() => void> = [];
    const host = await startReceiver((req, res) => {
      if (req.url.startsWith('/slow')) held.push(() => res.writeHead(200).end('late'));
      else res.writeHead(200).end('ok');
    });
    const slowUrl = `http://127.0.0.1:${host.port}/slow`;
    const fastUrl = `http://127.0.0.1:${host.port}/fast`;
    // One connection per endpoint, and a limit far beyond the test: with one pool per origin the
    // second endpoint's attempt would wait for the first endpoint's answers, which never come
    // until it has arrived.
    const s = sender(600_000, 1);
    const slow = [1, 2].map(() => s.send({ ...attempt(slowUrl), endpointId: 'whk_a' }));
    while (host.received.length < 1) await new Promise((r) => setTimeout(r, 10));
    const fast = await s.send({ ...attempt(fastUrl), endpointId: 'whk_b' });
    expect(fast).toMatchObject({ ok: true, statusCode: 200, responseBody: 'ok' });
    // The first endpoint still has one request at the receiver and one waiting for its connection.
    expect(held).toHaveLength(1);
    expect(host.received.map((r) => r.url)).toEqual(['/slow', '/fast']);
    for (const answer of held.splice(0)) answer();
    while (held.length < 1) await new Promise((r) => setTimeout(r, 10));
    for (const answer of held.splice(0)) answer();
    for (const r of await Promise.all(slow)) expect(r).toMatchObject({ ok: true, responseBody: 'late' });
    await host.close();
  });

  it('keeps a bounded number of endpoint pools, closing the least recently used', async () => {
    const pools = new EndpointPools({ connections: 1 }, 2);
    const origin = 'http://127.0.0.1:9';
    const a = pools.get('whk_a', origin);
    const b = pools.get('whk_b', origin);
    expect(pools.get('whk_a', origin)).toBe(a); // a is now the most recently used
    const c = pools.get('whk_c', origin);
    expect(pools.size).toBe(2);
    expect(b.closed).toBe(true);
    expect(a.closed).toBe(false);
    expect(pools.get('whk_a', origin)).toBe(a);
    expect(pools.get('whk_c', origin)).toBe(c);
    // An endpoint whose URL moved to another origin gets a pool of its own.
    expect(pools.get('whk_a', 'http://127.0.0.1:10')).not.toBe(a);
    await pools.close();
    expect(a.closed && c.closed).toBe(true);
  });

  it('reports a refused connection and an unusable URL as errors', async () => {
    const closed = await receiver(() => {});
    await receivers.splice(0)[0]?.close();
    const s = sender();
    expect((await s.send(attempt(closed))).error).toMatch(/ECONNREFUSED/);
    expect(await s.send(attempt('not a url'))).toMatchObject({ ok: false, statusCode: null, error: 'Invalid URL' });
  });
});
