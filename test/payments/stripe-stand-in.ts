import { startLocalServer } from '../stand-ins/local-server.js';

/**
 * A small stand-in for Stripe's HTTP API on 127.0.0.1, enough for the calls the
 * service makes through the official SDK (PaymentIntents create/update/cancel, balance
 * transactions of a payout). It records every request (path, Authorization,
 * Idempotency-Key, form body) so tests assert what was sent to Stripe, and, like
 * Stripe, answers a repeated idempotency key with the first answer.
 */
export interface StripeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
  /** The form-encoded body, flattened as the SDK sends it (`metadata[invoiceId]`). */
  form: Record<string, string>;
}

export interface StripeStandIn {
  /** For createHarness: `{ STRIPE_API_BASE }`. */
  env: { STRIPE_API_BASE: string };
  requests: StripeRequest[];
  /** Keys Stripe refuses (401). */
  badKeys: Set<string>;
  /** PaymentIntents Stripe holds, by id. */
  intents: Map<string, Record<string, unknown>>;
  /** payout id → the PaymentIntent ids of its charges (balance transactions). */
  payouts: Map<string, string[]>;
  /** Answer every request with a 500 (Stripe down). */
  down: boolean;
  /** Runs after Stripe made its answer and before the caller gets it (an event that outruns the answer). */
  beforeAnswer: ((r: StripeRequest, body: unknown) => Promise<void>) | undefined;
  close(): Promise<void>;
}

function stripeError(status: number, type: string, message: string, code?: string) {
  return { status, body: { error: { type, message, ...(code ? { code } : {}) } } };
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  let n = 0;
  const idempotent = new Map<string, { status: number; body: unknown }>();
  const state: Omit<StripeStandIn, 'env' | 'close'> = {
    requests: [],
    badKeys: new Set(),
    intents: new Map(),
    payouts: new Map(),
    down: false,
    beforeAnswer: undefined,
  };

  const answer = (r: StripeRequest): { status: number; body: unknown } => {
    if (state.down) return stripeError(500, 'api_error', 'Stripe stand-in is down');
    const key = r.authorization?.replace(/^Bearer /, '') ?? '';
    if (!key || state.badKeys.has(key)) {
      return stripeError(401, 'invalid_request_error', `Invalid API Key provided: ${key.slice(0, 8)}***`);
    }
    if (r.method === 'POST' && r.path === '/v1/payment_intents') {
      const id = `pi_standin${Date.now().toString(36)}${++n}`;
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.form)) {
        const m = /^metadata\[(.+)\]$/.exec(k);
        if (m) metadata[m[1] as string] = v;
      }
      const intent = {
        id,
        object: 'payment_intent',
        amount: Number(r.form.amount),
        amount_received: 0,
        currency: r.form.currency,
        status: 'requires_payment_method',
        client_secret: `${id}_secret_standin`,
        description: r.form.description ?? null,
        metadata,
        livemode: false,
        created: Math.floor(Date.now() / 1000),
      };
      state.intents.set(id, intent);
      return { status: 200, body: intent };
    }
    const cancel = /^\/v1\/payment_intents\/([^/]+)\/cancel$/.exec(r.path);
    if (r.method === 'POST' && cancel) {
      const intent = state.intents.get(cancel[1] as string);
      if (!intent) return stripeError(404, 'invalid_request_error', 'No such payment_intent', 'resource_missing');
      if (intent.status === 'succeeded' || intent.status === 'canceled') {
        return stripeError(
          400,
          'invalid_request_error',
          `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.`,
          'payment_intent_unexpected_state',
        );
      }
      intent.status = 'canceled';
      intent.cancellation_reason = r.form.cancellation_reason ?? null;
      return { status: 200, body: intent };
    }
    const update = /^\/v1\/payment_intents\/([^/]+)$/.exec(r.path);
    if (r.method === 'POST' && update) {
      const intent = state.intents.get(update[1] as string);
      if (!intent) return stripeError(404, 'invalid_request_error', 'No such payment_intent', 'resource_missing');
      if (intent.status !== 'requires_payment_method') {
        return stripeError(
          400,
          'invalid_request_error',
          `This PaymentIntent's amount could not be updated because it has a status of ${intent.status}.`,
          'payment_intent_unexpected_state',
        );
      }
      if (r.form.amount !== undefined) intent.amount = Number(r.form.amount);
      return { status: 200, body: intent };
    }
    if (r.method === 'GET' && r.path === '/v1/balance_transactions') {
      const payout = r.query.get('payout') ?? '';
      const data = (state.payouts.get(payout) ?? []).map((pi, i) => ({
        id: `txn_${payout}_${i}`,
        object: 'balance_transaction',
        type: 'charge',
        source: { id: `ch_${pi.slice(3)}`, object: 'charge', payment_intent: pi },
      }));
      return { status: 200, body: { object: 'list', url: '/v1/balance_transactions', has_more: false, data } };
    }
    return stripeError(404, 'invalid_request_error', `Unrecognized request URL (${r.method}: ${r.path})`);
  };

  const server = await startLocalServer(async (req, raw, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const form = Object.fromEntries(new URLSearchParams(raw));
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const r: StripeRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      authorization: header('authorization'),
      idempotencyKey: header('idempotency-key'),
      form,
    };
    state.requests.push(r);
    const cacheKey = r.idempotencyKey ? `${r.authorization} ${r.idempotencyKey}` : undefined;
    const result = (cacheKey && idempotent.get(cacheKey)) || answer(r);
    if (cacheKey && result.status < 500) idempotent.set(cacheKey, result);
    const hook = state.beforeAnswer;
    if (hook) {
      state.beforeAnswer = undefined;
      await hook(r, result.body);
    }
    res.writeHead(result.status, { 'content-type': 'application/json', 'request-id': `req_${++n}` });
    res.end(JSON.stringify(result.body));
  });

  return Object.assign(state, {
    env: { STRIPE_API_BASE: server.origin },
    close: server.close,
  });
}
