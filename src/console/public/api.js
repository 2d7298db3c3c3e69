/**
 * The console's only way to the server: the public API, same origin, session cookie.
 * Every failure becomes an ApiError whose `message` is written for a person.
 */

export class ApiError extends Error {
  constructor(status, code, message, retryAfter) {
    super(message);
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }
}

/** Called when the API says the session is gone (401) on a signed-in page. */
let onSessionExpired = () => {};
export function whenSessionExpires(fn) {
  onSessionExpired = fn;
}

function readable(status, code, message, retryAfter) {
  if (status === 429) {
    const wait = retryAfter
      ? ` Wait ${retryAfter} second${retryAfter === '1' ? '' : 's'} and try again.`
      : ' Wait a moment and try again.';
    return `Too many requests.${wait}`;
  }
  if (code === 'PLAN_REQUIRED') return message;
  if (status === 403 && code === 'FORBIDDEN') return `You don't have permission to do this: ${message}.`;
  if (status >= 500) return `The server had a problem (${status}). Try again in a moment.`;
  return message || `The request failed (${status}).`;
}

/**
 * `api('POST', '/api/webhooks', body)` → the response's `data` (or the whole body when it has none).
 * `{ quiet401: true }`: a 401 is only thrown, not treated as an expired session (sign-in, session probe).
 */
export async function api(method, path, body, opts = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers:
        body === undefined
          ? { accept: 'application/json' }
          : { 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'UNREACHABLE', "Can't reach the server. Check your connection and try again.");
  }
  let json = null;
  const text = await res.text();
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!res.ok) {
    const code = json?.error?.code ?? 'HTTP_ERROR';
    const retryAfter = res.headers.get('retry-after') ?? undefined;
    const err = new ApiError(
      res.status,
      code,
      readable(res.status, code, json?.error?.message, retryAfter),
      retryAfter,
    );
    if (res.status === 401 && !opts.quiet401) onSessionExpired(err);
    throw err;
  }
  if (json && typeof json === 'object' && 'data' in json) return json.data;
  return json;
}

/** Every page of a list (keyset pages, operations.md §1), up to `max` rows. */
export async function apiList(path, max = 500) {
  const rows = [];
  let after;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const url = `${path}${sep}limit=100${after ? `&startingAfter=${encodeURIComponent(after)}` : ''}`;
    const page = await api('GET', url);
    rows.push(...page);
    if (page.length < 100 || rows.length >= max) return rows;
    after = page[page.length - 1].id;
  }
}
