import { connect } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processEnvironment, type Run, signUpWithOrganization, startServer, stop, waitFor } from './processes.js';

/**
 * Issue 18 item 4 / issue 17 item 1: SIGTERM under keep-alive load resets no connection
 * and loses no write (src/platform/drain.ts). The real server runs as a child process on
 * a temp DATA_DIR (or a database of its own on PostgreSQL); 20 keep-alive connections
 * create and read customers in a loop; SIGTERM comes after a fixed number of answers.
 * Every request must be answered 2xx, or 503 with Retry-After, or be refused before it
 * was sent (ECONNREFUSED: the listener is closed, the client opens a new connection
 * after a `Connection: close` answer). Anything else (ECONNRESET, "other side closed",
 * a 5xx) is counted as a reset. The next start lists the customers: every 201 is there,
 * no failed POST is. Five runs, by count; then the same through `npm start`.
 */

const RUNS = 5;
const CLIENTS = 20;
/** Answers in a run before SIGTERM is sent. */
const ANSWERS_BEFORE_SIGTERM = 120;

interface RunResult {
  created: Map<string, string>;
  notCommitted: Set<string>;
  answered: number;
  served503: number;
  refusedBeforeSend: number;
  resets: string[];
  drainLog: string;
}

/**
 * A POST whose headers go out now and whose body goes out when `sendBody` is called: a
 * request that started before SIGTERM and finishes after it. Resolves with the raw answer.
 */
async function slowPost(base: string, cookie: string, name: string, server: Run) {
  const url = new URL(base);
  const body = JSON.stringify({ firstName: name });
  const requestId = `slow-${name}`;
  const socket = connect(Number(url.port), url.hostname);
  let raw = '';
  socket.on('data', (d) => {
    raw += String(d);
  });
  const closed = new Promise<string>((resolve, reject) => {
    socket.on('close', () => resolve(raw));
    socket.on('error', reject);
  });
  socket.write(
    [
      'POST /api/customers HTTP/1.1',
      `Host: ${url.host}`,
      `Cookie: ${cookie}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      '',
      '',
    ].join('\r\n'),
  );
  // The server has seen the request line and headers (Fastify logs them at the raw 'request' event).
  await waitFor(server, new RegExp(`"reqId":"${requestId}"[^\\n]*incoming request`));
  return {
    sendBody: async () => {
      socket.write(body);
      const answer = await closed;
      const [head = '', payload = ''] = answer.split('\r\n\r\n');
      return {
        raw: answer,
        status: Number(head.split(' ')[1]),
        connectionClose: /\r\nconnection: close/i.test(head),
        id: (JSON.parse(payload || '{}') as { data?: { id?: string } }).data?.id,
      };
    },
  };
}

function retryAfterOf(status: number, header: unknown): number {
  return status === 503 && typeof header === 'string' ? Number(header) : 0;
}

function describeError(err: unknown): { code: string; text: string } {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? 'UNKNOWN';
  return { code, text: `${code}: ${e.message ?? ''}${e.cause?.message ? ` (${e.cause.message})` : ''}` };
}

/** One run: load, SIGTERM after ANSWERS_BEFORE_SIGTERM answers, every outcome classified. */
async function loadAndTerminate(server: { run: Run; base: string }, cookie: string, tag: string): Promise<RunResult> {
  const result: RunResult = {
    created: new Map(),
    notCommitted: new Set(),
    answered: 0,
    served503: 0,
    refusedBeforeSend: 0,
    resets: [],
    drainLog: '',
  };
  const pool = new Pool(server.base, { connections: CLIENTS, pipelining: 1, keepAliveTimeout: 60_000 });
  const slow = await slowPost(server.base, cookie, `${tag}-slow`, server.run);
  let signalled = false;
  const headers = { cookie, 'content-type': 'application/json' };

  const answer = (status: number, retryAfter: unknown, what: string): boolean => {
    result.answered++;
    if (!signalled && result.answered >= ANSWERS_BEFORE_SIGTERM) {
      signalled = true;
      server.run.child.kill('SIGTERM');
    }
    if (status === 503 && typeof retryAfter === 'string' && retryAfter !== '') {
      result.served503++;
      return false;
    }
    if (status >= 200 && status < 300) return true;
    result.resets.push(`${what}: HTTP ${status}`);
    return false;
  };

  const client = async (c: number) => {
    let lastId: string | undefined;
    let backOff = 0;
    for (let k = 0; ; k++) {
      // A 503 says when to come back; a well-behaved client waits that long (by then the listener is closed).
      if (backOff > 0) await new Promise((r) => setTimeout(r, backOff * 1000));
      backOff = 0;
      const name = `${tag}-c${c}-${k}`;
      const post = k % 2 === 0 || !lastId;
      try {
        if (post) {
          const res = await pool.request({
            path: '/api/customers',
            method: 'POST',
            headers,
            body: JSON.stringify({ firstName: name }),
          });
          const json = (await res.body.json()) as { data?: { id: string } };
          backOff = retryAfterOf(res.statusCode, res.headers['retry-after']);
          if (
            answer(res.statusCode, res.headers['retry-after'], `POST ${name}`) &&
            res.statusCode === 201 &&
            json.data
          ) {
            result.created.set(json.data.id, name);
            lastId = json.data.id;
          } else {
            result.notCommitted.add(name);
          }
        } else {
          const res = await pool.request({ path: `/api/customers/${lastId}`, method: 'GET', headers: { cookie } });
          await res.body.text();
          backOff = retryAfterOf(res.statusCode, res.headers['retry-after']);
          answer(res.statusCode, res.headers['retry-after'], `GET ${lastId}`);
        }
      } catch (err) {
        if (post) result.notCommitted.add(name);
        const { code, text } = describeError(err);
        // The listener is closed: this request was never sent. The client is done.
        if (code === 'ECONNREFUSED') result.refusedBeforeSend++;
        else result.resets.push(`${post ? 'POST' : 'GET'}: ${text}`);
        return;
      }
    }
  };

  const loops = Array.from({ length: CLIENTS }, (_, c) => client(c));
  await waitFor(server.run, /shutting down/);
  // The slow request's body arrives after the drain began: it is served, not refused.
  const slowAnswer = await slow.sendBody();
  await Promise.all(loops);
  const code = await server.run.exited;
  await pool.close();
  expect(code, server.run.output().slice(-3000)).toBe(0);
  expect(slowAnswer.status, slowAnswer.raw).toBe(201);
  expect(slowAnswer.connectionClose).toBe(true);
  if (slowAnswer.id) result.created.set(slowAnswer.id, `${tag}-slow`);
  result.drainLog = /"drain":(\{[^}]*\})/.exec(server.run.output())?.[1] ?? '';
  return result;
}

async function listCustomerNames(base: string, cookie: string): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  let after: string | undefined;
  for (;;) {
    const res = await fetch(`${base}/api/customers?limit=100${after ? `&startingAfter=${after}` : ''}`, {
      headers: { cookie },
    });
    expect(res.status).toBe(200);
    const page = (await res.json()).data as { id: string; name: string }[];
    for (const c of page) all.set(c.id, c.name);
    if (page.length < 100) return all;
    after = page[page.length - 1]?.id;
  }
}

function verify(result: RunResult, listed: Map<string, string>) {
  const names = new Set(listed.values());
  const lost = [...result.created].filter(([id, name]) => listed.get(id) !== name);
  const committedFailures = [...result.notCommitted].filter((n) => names.has(n));
  expect(lost, 'answered 201 but not in the database').toEqual([]);
  expect(committedFailures, 'failed POSTs found in the database').toEqual([]);
}

describe('SIGTERM under keep-alive load', () => {
  let env: Record<string, string> = {};
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ env, cleanup } = await processEnvironment('drain'));
    Object.assign(env, { RATE_LIMIT_PER_MINUTE: '1000000', RUN_WORKER: 'false' });
  });
  afterAll(async () => cleanup?.());

  it(`resets no connection and loses no write over ${RUNS} runs`, async () => {
    let server = await startServer(env);
    const { cookie } = await signUpWithOrganization(server.base, 'Drain Lawn');
    const figures: string[] = [];
    let previous: RunResult | undefined;
    for (let r = 1; r <= RUNS; r++) {
      if (previous) verify(previous, await listCustomerNames(server.base, cookie));
      previous = await loadAndTerminate(server, cookie, `r${r}`);
      figures.push(
        `run ${r}: answered ${previous.answered}, 201 ${previous.created.size}, 503 ${previous.served503}, refused before send ${previous.refusedBeforeSend}, resets ${previous.resets.length}, drain ${previous.drainLog}`,
      );
      expect(previous.resets, figures.join('\n')).toEqual([]);
      server = await startServer(env);
    }
    if (previous) verify(previous, await listCustomerNames(server.base, cookie));
    expect(await stop(server.run)).toBe(0);
    console.log(figures.join('\n'));
  }, 600_000);
});

describe('SIGTERM to the pid `npm start` was started as', () => {
  let env: Record<string, string> = {};
  let cleanup: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ env, cleanup } = await processEnvironment('npmstart'));
  });
  afterAll(async () => cleanup?.());

  it('finishes the in-flight request, exits 0 and closes the port', async () => {
    const server = await startServer(env, 'npm', ['start']);
    const { cookie } = await signUpWithOrganization(server.base);
    const slow = await slowPost(server.base, cookie, 'npm-slow', server.run);
    server.run.child.kill('SIGTERM');
    await waitFor(server.run, /shutting down/);
    const answer = await slow.sendBody();
    expect(answer.status, answer.raw).toBe(201);
    expect(answer.connectionClose).toBe(true);
    expect(await server.run.exited).toBe(0);
    const url = new URL(server.base);
    const refused = await new Promise<string>((resolve) => {
      const s = connect(Number(url.port), url.hostname);
      s.on('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    expect(refused).toBe('ECONNREFUSED');
  }, 180_000);
});
