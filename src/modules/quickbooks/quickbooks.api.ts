/*
 * The QuickBooks Online v3 API, over plain fetch (undici): JSON in and out, a point of the
 * realm's shared budget taken before every call, Intuit's Fault read into one error for people.
 * operations.md §11.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RealmPace } from './quickbooks.pacing.js';

/** minorversion sent on every call (Intuit's current behaviour for the fields used here). */
const MINOR_VERSION = '75';
/** A call that takes longer is a timeout (retried like a 5xx; the requestid keeps it single). */
const CALL_TIMEOUT_MS = 30_000;
/**
 * A wait for the realm's budget up to this long is waited here; a longer one (the window is
 * spent) hands the job back with its due time instead of holding its lease and slot meanwhile.
 */
const WAIT_IN_PLACE_MS = 2_000;

export type QboOutcome =
  | { kind: 'ok'; body: Record<string, unknown> }
  /** 401: the access token expired or was revoked. */
  | { kind: 'unauthorized' }
  /** 429: wait `retryAfterMs`. */
  | { kind: 'throttled'; retryAfterMs: number }
  /** 5xx, a timeout or a cut connection: try again later (the requestid keeps a create single). */
  | { kind: 'transient'; message: string }
  /** QuickBooks refused the record (a Fault): kept as the failure's text. */
  | { kind: 'fault'; code: string; message: string; status: number };

export interface QboCall {
  apiBase: string;
  realmId: string;
  accessToken: string;
  pace: RealmPace;
}

/** Intuit's Fault (`{Fault: {Error: [{Message, Detail, code}], type}}`) as one line, with its first code. */
export function faultText(body: unknown): { code: string; message: string } | null {
  const fault = (
    body as { Fault?: { Error?: Array<{ Message?: string; Detail?: string; code?: string }>; type?: string } }
  )?.Fault;
  if (!fault?.Error?.length) return null;
  const first = fault.Error[0] ?? {};
  const message = fault.Error.map((e) => [e.Message, e.Detail].filter(Boolean).join(': ')).join('; ');
  return { code: String(first.code ?? fault.type ?? 'Fault'), message: message || String(fault.type ?? 'Fault') };
}

function retryAfterMs(header: string | null): number {
  if (!header) return 60_000;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 3_600_000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? 60_000 : Math.max(0, Math.min(at - Date.now(), 3_600_000));
}

/**
 * One call: `path` below /v3/company/{realm}/, `query` added (requestid, operation). Takes a
 * point of the realm's budget first (or answers `throttled` with the time until the next one);
 * a 429 pauses the realm for every process.
 */
export async function qboRequest(
  call: QboCall,
  method: 'GET' | 'POST',
  path: string,
  query: Record<string, string>,
  body?: unknown,
): Promise<QboOutcome> {
  const url = new URL(`${call.apiBase}/v3/company/${encodeURIComponent(call.realmId)}/${path}`);
  for (const [k, v] of Object.entries({ ...query, minorversion: MINOR_VERSION })) url.searchParams.set(k, v);
  for (;;) {
    const wait = await call.pace.take(call.realmId);
    if (wait === 0) break;
    if (wait > WAIT_IN_PLACE_MS) return { kind: 'throttled', retryAfterMs: wait };
    await sleep(wait);
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${call.accessToken}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (err) {
    return { kind: 'transient', message: `QuickBooks did not answer (${(err as Error).message})` };
  }
  const text = await res.text().catch(() => '');
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (res.status === 401) return { kind: 'unauthorized' };
  if (res.status === 429) {
    const wait = retryAfterMs(res.headers.get('retry-after'));
    await call.pace.pause(call.realmId, wait);
    return { kind: 'throttled', retryAfterMs: wait };
  }
  if (res.status >= 500) return { kind: 'transient', message: `QuickBooks answered ${res.status}` };
  const fault = faultText(json);
  if (fault) return { kind: 'fault', ...fault, status: res.status };
  if (!res.ok || json === null || typeof json !== 'object')
    return {
      kind: 'fault',
      code: String(res.status),
      message: `QuickBooks answered ${res.status}`,
      status: res.status,
    };
  return { kind: 'ok', body: json as Record<string, unknown> };
}
