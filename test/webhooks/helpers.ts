import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import pino from 'pino';
import { type RunningWorker, startTasks } from '../../src/background/runner.js';
import type { Config } from '../../src/config.js';
import { type Database, rowsOf } from '../../src/db/client.js';
import { createWebhookTask, type WebhookWorkerOptions } from '../../src/delivery/delivery.task.js';
import { EVENT_PAYLOADS } from '../../src/modules/event-payloads.js';
import { isCatalogEvent } from '../../src/platform/events/catalog.js';
import { emit } from '../../src/platform/events/outbox.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { checkEvent } from '../contract.js';

export interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Responder = (req: Received, res: ServerResponse, n: number) => void;

/** A real HTTP receiver on 127.0.0.1 that records every request and answers with `respond`. */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** TCP connections accepted (to prove the SSRF guard never connects). */
  connections: number;
  respond: Responder;
  close(): Promise<void>;
}

export const ok200: Responder = (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('ok');
};

export async function startReceiver(respond: Responder = ok200): Promise<Receiver> {
  const state: Receiver = {
    url: '',
    port: 0,
    received: [],
    connections: 0,
    respond,
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      state.received.push(r);
      // Every body the service sends must match the `webhooks` section of /openapi.json.
      checkEvent(r.body);
      state.respond(r, res, state.received.length);
    });
  });
  server.on('connection', () => {
    state.connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${state.port}/hook`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

/** Starts the webhook worker task the way `npm run worker` does, with test-sized knobs. */
export function startWorker(database: Database, config: Config, opts: WebhookWorkerOptions = {}): RunningWorker {
  const log = pino({ level: 'silent' });
  return startTasks([createWebhookTask({ pollMs: 50, ...opts })], { config, database, log });
}

const SYSTEM_ACTOR = { kind: 'user' as const, id: 'usr_test', role: 'owner' as const };

type Schema = {
  examples?: unknown[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: Schema[];
  type?: string | string[];
  format?: string;
  minLength?: number;
  minimum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
};

/** A value that fits `schema`: its first example where it has one (the resources do), else the least that fits. */
function exampleOf(schema: Schema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return structuredClone(schema.examples[0]);
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf?.[0]) return exampleOf(schema.anyOf[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object') {
    return Object.fromEntries((schema.required ?? []).map((k) => [k, exampleOf(schema.properties?.[k] ?? {})]));
  }
  if (type === 'array') return [];
  if (type === 'number' || type === 'integer') return schema.minimum ?? 0;
  if (type === 'boolean') return false;
  if (type === 'null') return null;
  if (schema.format === 'date-time') return '2026-01-15T10:00:00.000Z';
  if (schema.format === 'date') return '2026-01-15';
  return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
}

/** Data of the shape `type` really carries (src/modules/event-payloads.ts), with `fields` on top. */
export function sampleEventData(type: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const schema = isCatalogEvent(type) ? EVENT_PAYLOADS.get(type) : undefined;
  return { ...(schema ? (exampleOf(schema as Schema) as Record<string, unknown>) : {}), ...fields };
}

/**
 * Test-only emit, for the delivery engine's own tests: events recorded in one tenant
 * transaction. A catalog event's data is completed to its real shape (sampleEventData), so
 * what the receivers get still matches the `webhooks` section the harness checks it against.
 */
export async function emitEvents(
  database: Database,
  organizationId: string,
  list: Array<{ type: string; data: Record<string, unknown> }>,
) {
  return inTenant(database.db, organizationId, SYSTEM_ACTOR, async (ctx) => {
    const out = [];
    for (const e of list) out.push(await emit(ctx, e.type, sampleEventData(e.type, e.data)));
    return out;
  });
}

/**
 * Whether the fan-out has still to read this event: its transaction's batch is there and has
 * not got past it (drizzle/0031). `db` reads every organization (the harness's admin).
 */
export async function awaitingFanOut(db: Database['db'], eventId: string): Promise<boolean> {
  const [row] = rowsOf<{ waiting: boolean }>(
    await db.execute(sql`
    SELECT EXISTS (
      SELECT 1 FROM events e
      JOIN event_batches b ON b.tx = e.tx AND b.organization_id = e.organization_id
      WHERE e.id = ${eventId} AND e.id > COALESCE(b.fanned_to, '')) AS waiting`),
  );
  return row?.waiting === true;
}

/** Polls `check` until it returns a truthy value (bounded; never asserts timings). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 20_000,
): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export const RETRY_ENV = { WEBHOOK_RETRY_SCHEDULE: '100ms,100ms,100ms,100ms' };
