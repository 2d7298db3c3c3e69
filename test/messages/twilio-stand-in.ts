import { startLocalServer } from '../stand-ins/local-server.js';

/**
 * A small stand-in for Twilio's Messages API on 127.0.0.1, enough for what the service sends
 * through the official SDK (POST /2010-04-01/Accounts/{AccountSid}/Messages.json). It records
 * every request (path, Basic credentials, form) so tests assert what reached "Twilio", and answers
 * from a script when one is queued: an HTTP status with Twilio's error body (429, 503, 21610), or
 * `drop` (the request arrives, the connection is cut before any answer: the outcome is unknown).
 */
export interface TwilioRequest {
  method: string;
  path: string;
  accountSid: string;
  authToken: string;
  form: Record<string, string>;
}

export type ScriptedAnswer = { status: number; code: number; message: string } | 'drop';

export interface TwilioStandIn {
  /** For createHarness: `{ TWILIO_API_BASE }`. */
  env: { TWILIO_API_BASE: string };
  requests: TwilioRequest[];
  /** The texts Twilio accepted (created), in order. */
  accepted: Array<{
    sid: string;
    to: string;
    body: string;
    from: string;
    statusCallback: string | undefined;
    /** Whose account sent it, and when it arrived (Date.now(); the bench's pace and fairness figures). */
    accountSid: string;
    at: number;
  }>;
  /** Answers for the next create calls, in order; an empty script accepts. */
  script: ScriptedAnswer[];
  /** Credentials Twilio knows (AccountSid → auth token); others are refused 401 (code 20003). */
  accounts: Map<string, string>;
  /** Any credentials are known (the docs' walkthrough, whose organizations pick their own). */
  acceptAnyAccount: boolean;
  /**
   * Runs after a text is accepted and before Twilio's answer leaves: what Twilio does when it
   * calls the status callback before the sender has recorded the MessageSid.
   */
  beforeAnswer: ((accepted: { sid: string; to: string; statusCallback: string | undefined }) => Promise<void>) | null;
  close(): Promise<void>;
}

export async function startTwilioStandIn(): Promise<TwilioStandIn> {
  let n = 0;
  const state: Omit<TwilioStandIn, 'env' | 'close'> = {
    requests: [],
    accepted: [],
    script: [],
    accounts: new Map(),
    acceptAnyAccount: false,
    beforeAnswer: null,
  };
  const server = await startLocalServer(async (req, raw, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const [user, pass] = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString('utf8')
      .split(':');
    const request: TwilioRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      accountSid: user ?? '',
      authToken: pass ?? '',
      form: Object.fromEntries(new URLSearchParams(raw)),
    };
    state.requests.push(request);
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(url.pathname);
    if (!m || request.method !== 'POST') return answer(404, { code: 20404, message: 'Not found', status: 404 });
    const known = state.acceptAnyAccount || state.accounts.get(request.accountSid) === request.authToken;
    if (!known || m[1] !== request.accountSid) {
      return answer(401, { code: 20003, message: 'Authenticate', status: 401 });
    }
    const scripted = state.script.shift();
    if (scripted === 'drop') {
      req.socket.destroy();
      return;
    }
    if (scripted)
      return answer(scripted.status, { ...scripted, more_info: `https://www.twilio.com/docs/errors/${scripted.code}` });
    const sid = `SM${(++n).toString(16).padStart(32, '0')}`;
    const f = request.form;
    state.accepted.push({
      sid,
      to: f.To ?? '',
      body: f.Body ?? '',
      from: f.From ?? f.MessagingServiceSid ?? '',
      statusCallback: f.StatusCallback,
      accountSid: request.accountSid,
      at: Date.now(),
    });
    await state.beforeAnswer?.({ sid, to: f.To ?? '', statusCallback: f.StatusCallback });
    answer(201, {
      sid,
      account_sid: request.accountSid,
      to: f.To,
      from: f.From ?? null,
      messaging_service_sid: f.MessagingServiceSid ?? null,
      body: f.Body,
      status: 'queued',
      num_segments: '1',
      direction: 'outbound-api',
      date_created: new Date().toUTCString(),
      uri: `/2010-04-01/Accounts/${request.accountSid}/Messages/${sid}.json`,
    });
  });
  return Object.assign(state, {
    env: { TWILIO_API_BASE: server.origin },
    close: server.close,
  });
}
