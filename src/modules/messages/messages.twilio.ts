import { createRequire } from 'node:module';
import type twilioModule from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';
import type { Config } from '../../config.js';
import { SecretBox } from '../../platform/secrets.js';
import type { OrgSettings } from '../settings/settings.service.js';

/*
 * Twilio through its official SDK (operations.md §10). TWILIO_API_BASE moves where the SDK calls
 * (a local stand-in in tests and the docs' walkthrough): the SDK builds each URI on its own hosts
 * (api.twilio.com, …), and the request client below swaps that origin for the configured one,
 * keeping the path and query, so every call the SDK makes goes there and nothing else changes.
 */

/** What the messages module needs to talk to Twilio: the box that opens stored tokens, and where the API is. */
export interface TwilioDeps {
  box: SecretBox;
  api: Config['twilioApi'];
  /** The public origin Twilio calls back (BASE_URL): status callbacks and signature checks use it. */
  baseUrl: string;
}

const depsByConfig = new WeakMap<Config, TwilioDeps>();

export function twilioDeps(config: Config): TwilioDeps {
  let deps = depsByConfig.get(config);
  if (!deps) {
    deps = { box: new SecretBox(config.authSecret), api: config.twilioApi, baseUrl: config.baseUrl };
    depsByConfig.set(config, deps);
  }
  return deps;
}

/**
 * Connections to Twilio's API at once: the worker hands up to 32 texts side by side
 * (SEND_CONCURRENCY in messages.tasks.ts), and the SDK's agent would queue all above its default 20.
 */
const MAX_SOCKETS = 32;

type RequestOptions<TData> = RequestClient.RequestOptions<TData>;

/**
 * The SDK (a CommonJS package), loaded with the first text, callback or refusal that needs it:
 * importing it (axios, jsonwebtoken, xmlbuilder and their own dependencies) cost about 0.17 s of
 * CPU at every start, before /readyz, for a feature an organization uses once it has configured
 * Twilio. A synchronous require keeps these functions as they were (quickbooks.oauth.ts does the same).
 */
let loaded: typeof twilioModule | undefined;
const sdk = (): typeof twilioModule => {
  loaded ??= createRequire(import.meta.url)('twilio') as typeof twilioModule;
  return loaded;
};

/** A request client that sends every call to `origin` (TWILIO_API_BASE), keeping path and query. */
function apiBaseRequestClient(origin: string) {
  class ApiBaseRequestClient extends sdk().RequestClient {
    override request<TData>(opts: RequestOptions<TData>) {
      const uri = new URL(opts.uri);
      return super.request<TData>({ ...opts, uri: `${origin}${uri.pathname}${uri.search}` });
    }
  }
  return new ApiBaseRequestClient({ timeout: 15_000, maxSockets: MAX_SOCKETS });
}

/** The organization's Twilio credentials, or null when not both set (or sealed under another AUTH_SECRET). */
export function twilioCredentials(
  settings: OrgSettings,
  box: SecretBox,
): { accountSid: string; authToken: string } | null {
  if (!settings.twilioAccountSid || !settings.twilioAuthTokenSealed) return null;
  try {
    return { accountSid: settings.twilioAccountSid, authToken: box.open(settings.twilioAuthTokenSealed) };
  } catch {
    return null;
  }
}

/**
 * One HTTP client per API origin, shared by every organization's SDK client: the credentials go
 * with each request, so the connections (keep-alive) are reused from text to text instead of a
 * new agent and a new TLS connection per text. No automatic retries (the worker retries, counted).
 */
const requestClients = new Map<string, InstanceType<typeof twilioModule.RequestClient>>();
function requestClient(api: TwilioDeps['api']) {
  const key = api ?? '';
  let client = requestClients.get(key);
  if (!client) {
    client = api
      ? apiBaseRequestClient(api)
      : new (sdk().RequestClient)({ timeout: 15_000, autoRetry: false, maxSockets: MAX_SOCKETS });
    requestClients.set(key, client);
  }
  return client;
}

/** The SDK client with the organization's credentials (cheap: the HTTP client below it is shared). */
export function twilioClient(credentials: { accountSid: string; authToken: string }, api: TwilioDeps['api']) {
  return sdk()(credentials.accountSid, credentials.authToken, { autoRetry: false, httpClient: requestClient(api) });
}

/** The path Twilio posts a text's status to (the statusCallback, and what its signature covers). */
export const statusCallbackPath = (organizationId: string) => `/api/sms/twilio/${organizationId}/status`;
export const inboundPath = (organizationId: string) => `/api/sms/twilio/${organizationId}/inbound`;

/** Twilio's "the number opted out at the carrier" (the recipient texted STOP to the sender). */
export const TWILIO_OPTED_OUT = 21610;

/** Whether `err` is the SDK's refusal from Twilio's API (which only a loaded SDK throws). */
export function isTwilioRestException(err: unknown): err is InstanceType<typeof twilioModule.RestException> {
  return loaded !== undefined && err instanceof loaded.RestException;
}

export const validateTwilioRequest: typeof twilioModule.validateRequest = (...args) => sdk().validateRequest(...args);

/** The empty TwiML answer to an inbound text (nothing to reply), made once. */
let twimlEmpty: string | undefined;
export const emptyTwiml = (): string => {
  twimlEmpty ??= new (sdk().twiml.MessagingResponse)().toString();
  return twimlEmpty;
};
