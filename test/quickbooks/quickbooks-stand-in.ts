import { startLocalServer } from '../stand-ins/local-server.js';

/**
 * A stand-in for Intuit on 127.0.0.1: the OAuth 2 endpoints `intuit-oauth` calls (token
 * exchange and refresh, rotating the refresh token; revoke) and the QuickBooks Online v3 API
 * for what the sync writes (customer, invoice, payment, refund receipt, item: create, sparse
 * update with SyncToken, void, read, and the queries it sends: an Item by name, an Account by
 * type). Like Intuit, it answers a repeated `requestid` with the first answer instead of writing
 * again. Faults as Intuit words them: 401 for an expired token, 429 with Retry-After, 5xx, 6140
 * duplicate DocNumber, 6240 duplicate name (a Customer's DisplayName, an Item's Name), 2020 a
 * required field missing (a RefundReceipt's DepositToAccountRef, a Service Item's
 * IncomeAccountRef), 5010 stale SyncToken and a closed books period. `failEvery = 3` fails a third of
 * the v3 requests, half of those after writing (the answer lost, as a cut connection would).
 */

type Obj = Record<string, unknown> & { Id: string; SyncToken: string };

export type Scripted =
  | { status: 429; retryAfter?: string }
  | { status: 500 | 502 | 503 }
  /** Write, then answer 500: the client cannot know it was written. */
  | { status: 'lost' };

export interface QboStandIn {
  env: Record<string, string>;
  clientId: string;
  clientSecret: string;
  /** Authorization codes Intuit would hand out: code → realm. */
  codes: Map<string, string>;
  /** realm → entity name (Customer, Invoice, Payment, RefundReceipt, Item, Account) → Id → object. */
  companies: Map<string, Map<string, Map<string, Obj>>>;
  /** Books closed through this date (YYYY-MM-DD) per realm: a TxnDate on or before it is refused. */
  closedThrough: Map<string, string>;
  /** Answers for the next v3 requests, in order. */
  script: Scripted[];
  /** Fail every n-th v3 request (0: never). */
  failEvery: number;
  /** Every v3 request, with when it arrived (Date.now()). */
  v3Requests: Array<{ method: string; path: string; requestid: string | null; at: number }>;
  tokenCalls: Array<{ grantType: string }>;
  revoked: string[];
  maxInFlight: number;
  /** Makes every access token handed out so far expired (401). */
  expireAccessTokens(): void;
  /** Objects of an entity in a realm. */
  list(realm: string, entity: string): Obj[];
  close(): Promise<void>;
}

const fault = (code: string, message: string, detail: string, type = 'ValidationFault') => ({
  Fault: { Error: [{ Message: message, Detail: detail, code }], type },
  time: new Date().toISOString(),
});

const ENTITIES: Record<string, string> = {
  customer: 'Customer',
  invoice: 'Invoice',
  payment: 'Payment',
  refundreceipt: 'RefundReceipt',
  item: 'Item',
};

/** Fields Intuit refuses a create without (2020), per entity. */
const REQUIRED: Record<string, string[]> = {
  RefundReceipt: ['DepositToAccountRef', 'CustomerRef'],
  Item: ['Name', 'IncomeAccountRef'],
};

export async function startQboStandIn(): Promise<QboStandIn> {
  let serial = 0;
  let v3Count = 0;
  let inFlight = 0;
  const access = new Set<string>();
  const refresh = new Map<string, string>(); // refresh token → realm
  const seenRequestIds = new Map<string, { status: number; body: unknown }>();
  const s = {
    clientId: 'qbo-client',
    clientSecret: 'qbo-secret',
    codes: new Map<string, string>(),
    companies: new Map<string, Map<string, Map<string, Obj>>>(),
    closedThrough: new Map<string, string>(),
    script: [] as Scripted[],
    failEvery: 0,
    v3Requests: [] as QboStandIn['v3Requests'],
    tokenCalls: [] as QboStandIn['tokenCalls'],
    revoked: [] as string[],
    maxInFlight: 0,
  };
  const company = (realm: string) => {
    let c = s.companies.get(realm);
    if (!c) {
      c = new Map(Object.values(ENTITIES).map((e) => [e, new Map<string, Obj>()]));
      c.set(
        'Account',
        new Map([
          ['79', { Id: '79', SyncToken: '0', Name: 'Services Income', AccountType: 'Income' }],
          ['35', { Id: '35', SyncToken: '0', Name: 'Checking', AccountType: 'Bank' }],
        ]),
      );
      s.companies.set(realm, c);
    }
    return c;
  };
  const issue = (realm: string) => {
    const a = `at-${++serial}`;
    const r = `rt-${++serial}`;
    access.add(a);
    refresh.set(r, realm);
    return {
      token_type: 'bearer',
      access_token: a,
      refresh_token: r,
      expires_in: 3600,
      x_refresh_token_expires_in: 8726400,
    };
  };

  const server = await startLocalServer(async (req, raw, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const basic = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString('utf8');

    // --- OAuth ---
    if (url.pathname === '/oauth2/v1/tokens/bearer' && req.method === 'POST') {
      if (basic !== `${s.clientId}:${s.clientSecret}`) return answer(401, { error: 'invalid_client' });
      const form = new URLSearchParams(raw);
      const grantType = form.get('grant_type') ?? '';
      s.tokenCalls.push({ grantType });
      if (grantType === 'authorization_code') {
        const realm = s.codes.get(form.get('code') ?? '');
        if (!realm) return answer(400, { error: 'invalid_grant', error_description: 'unknown code' });
        s.codes.delete(form.get('code') ?? '');
        return answer(200, issue(realm));
      }
      if (grantType === 'refresh_token') {
        const realm = refresh.get(form.get('refresh_token') ?? '');
        if (!realm)
          return answer(400, { error: 'invalid_grant', error_description: 'Incorrect Token type or clientID' });
        refresh.delete(form.get('refresh_token') ?? ''); // Intuit rotates: the old one is spent
        return answer(200, issue(realm));
      }
      return answer(400, { error: 'unsupported_grant_type' });
    }
    if (url.pathname === '/v2/oauth2/tokens/revoke' && req.method === 'POST') {
      const token = (JSON.parse(raw || '{}') as { token?: string }).token ?? '';
      s.revoked.push(token);
      refresh.delete(token);
      return answer(200, {});
    }

    // --- v3 ---
    const m = /^\/v3\/company\/([^/]+)\/(\w+)(?:\/([^/]+))?$/.exec(url.pathname);
    if (!m) return answer(404, fault('404', 'Not found', url.pathname));
    const [, realm = '', kind = '', id] = m;
    const requestid = url.searchParams.get('requestid');
    s.v3Requests.push({ method: req.method ?? '', path: url.pathname + url.search, requestid, at: Date.now() });
    if (!access.has((req.headers.authorization ?? '').replace(/^Bearer /, ''))) {
      return answer(
        401,
        fault(
          '3200',
          'message=AuthenticationFailed; errorCode=003200; statusCode=401',
          'Token expired',
          'AUTHENTICATION',
        ),
      );
    }
    inFlight++;
    s.maxInFlight = Math.max(s.maxInFlight, inFlight);
    try {
      await new Promise((r) => setImmediate(r));
      v3Count++;
      let scripted = s.script.shift();
      if (!scripted && s.failEvery > 0 && v3Count % s.failEvery === 0) {
        scripted = (v3Count / s.failEvery) % 2 === 0 ? { status: 503 } : { status: 'lost' };
      }
      if (scripted && scripted.status === 429)
        return answer(429, fault('003001', 'ThrottleExceeded', 'Throttle exceeded'), {
          'retry-after': scripted.retryAfter ?? '0',
        });
      if (scripted && scripted.status !== 'lost') return answer(scripted.status, { error: 'Service Unavailable' });

      const key = requestid ? `${realm} ${requestid}` : null;
      if (key && seenRequestIds.has(key)) {
        const first = seenRequestIds.get(key) as { status: number; body: unknown };
        return answer(scripted ? 500 : first.status, scripted ? { error: 'lost' } : first.body);
      }
      const result = handle(realm, kind, id, req.method ?? 'GET', url.searchParams, raw);
      if (key && req.method === 'POST') seenRequestIds.set(key, result);
      if (scripted) return answer(500, { error: 'Internal Server Error' });
      return answer(result.status, result.body);
    } finally {
      inFlight--;
    }
  });

  function handle(
    realm: string,
    kind: string,
    id: string | undefined,
    method: string,
    q: URLSearchParams,
    raw: string,
  ) {
    const c = company(realm);
    const ok = (name: string, obj: Obj) => ({ status: 200, body: { [name]: obj, time: new Date().toISOString() } });
    if (kind === 'query' && method === 'GET') {
      const query = q.get('query') ?? '';
      // A quoted value as Intuit's query language has it: a backslash escapes the next character.
      const unquote = (v: string) => v.replace(/\\(.)/g, '$1');
      const item = /from Item where Name = '((?:[^'\\]|\\.)*)'/i.exec(query);
      if (item) {
        const name = unquote(item[1] ?? '');
        const found = [...(c.get('Item') as Map<string, Obj>).values()].filter((i) => i.Name === name);
        return { status: 200, body: { QueryResponse: found.length ? { Item: found } : {} } };
      }
      const account = /from Account where AccountType = '(\w+)'/i.exec(query);
      if (account) {
        const found = [...(c.get('Account') as Map<string, Obj>).values()].filter((a) => a.AccountType === account[1]);
        return { status: 200, body: { QueryResponse: found.length ? { Account: found.slice(0, 1) } : {} } };
      }
      return { status: 400, body: fault('4000', 'Error parsing query', query) };
    }
    const name = ENTITIES[kind];
    if (!name) return { status: 400, body: fault('2010', 'Unsupported Operation', kind) };
    const table = c.get(name) as Map<string, Obj>;
    if (method === 'GET') {
      const obj = id ? table.get(id) : undefined;
      return obj ? ok(name, obj) : { status: 400, body: fault('610', 'Object Not Found', `${name} ${id}`) };
    }
    const body = JSON.parse(raw || '{}') as Record<string, unknown>;
    const closed = s.closedThrough.get(realm);
    if (closed && typeof body.TxnDate === 'string' && body.TxnDate <= closed) {
      return {
        status: 400,
        body: fault(
          '6210',
          'Account Period Closed',
          `The account period has closed. ${body.TxnDate} is on or before the closing date ${closed}.`,
        ),
      };
    }
    if (typeof body.Id === 'string') {
      const current = table.get(body.Id);
      if (!current) return { status: 400, body: fault('610', 'Object Not Found', `${name} ${body.Id}`) };
      if (String(body.SyncToken) !== current.SyncToken)
        return {
          status: 400,
          body: fault('5010', 'Stale Object Error', `You and ${name} were working on this at the same time.`),
        };
      const next: Obj = { ...current, ...body, Id: current.Id, SyncToken: String(Number(current.SyncToken) + 1) };
      delete (next as Record<string, unknown>).sparse;
      if (q.get('operation') === 'void') next.PrivateNote = 'Voided';
      table.set(current.Id, next);
      return ok(name, next);
    }
    if (name === 'Invoice' && [...table.values()].some((i) => i.DocNumber === body.DocNumber)) {
      return {
        status: 400,
        body: fault(
          '6140',
          'Duplicate Document Number Error',
          `Duplicate Document Number Error : You must specify a different number. This number has already been used. DocNumber=${String(body.DocNumber)}`,
        ),
      };
    }
    const missing = (REQUIRED[name] ?? []).find((f) => body[f] === undefined || body[f] === '');
    if (missing)
      return {
        status: 400,
        body: fault(
          '2020',
          'Required param missing, need to supply the required value for the API',
          `Required parameter ${missing} is missing in the request`,
        ),
      };
    if (name === 'Item' && [...table.values()].some((x) => x.Name === body.Name)) {
      return {
        status: 400,
        body: fault('6240', 'Duplicate Name Exists Error', `The name supplied already exists. : ${String(body.Name)}`),
      };
    }
    if (name === 'Customer' && [...table.values()].some((x) => x.DisplayName === body.DisplayName)) {
      return {
        status: 400,
        body: fault(
          '6240',
          'Duplicate Name Exists Error',
          `The name supplied already exists. : ${String(body.DisplayName)}`,
        ),
      };
    }
    const obj: Obj = { ...body, Id: String(++serial), SyncToken: '0' };
    table.set(obj.Id, obj);
    return ok(name, obj);
  }

  const origin = server.origin;
  return Object.assign(s, {
    env: {
      QUICKBOOKS_API_BASE: origin,
      QUICKBOOKS_OAUTH_BASE: origin,
      QUICKBOOKS_CLIENT_ID: s.clientId,
      QUICKBOOKS_CLIENT_SECRET: s.clientSecret,
    },
    expireAccessTokens: () => access.clear(),
    list: (realm: string, entity: string) => [...(company(realm).get(entity)?.values() ?? [])],
    close: server.close,
  });
}
