import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, operations, paths, webhooks } from './schema.js';

export interface ClientOptions {
  /** The API's origin, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string;
  /** An API key (`sk_…`, Business plan), sent as a bearer token. */
  apiKey?: string;
  /** A session cookie header (`better-auth.session_token=…`) instead of an API key. */
  cookie?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

/**
 * A typed client for the Field-Service CRM API: paths, parameters, bodies and responses
 * are checked against the OpenAPI document the server serves (openapi-typescript types,
 * openapi-fetch calls).
 *
 *   const crm = createCrmClient({ baseUrl, apiKey });
 *   const { data, error } = await crm.POST('/api/customers', { body: { firstName: 'Dana' } });
 */
export function createCrmClient(options: ClientOptions): Client<paths> {
  const headers: Record<string, string> = {};
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  if (options.cookie) headers.cookie = options.cookie;
  return createFetchClient<paths>({
    baseUrl: options.baseUrl,
    headers,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
