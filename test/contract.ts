import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

/*
 * The document is the contract (issue 26). Every response the API test suite receives
 * through a harness app (`app.inject`, see harness.ts) is checked against the served
 * /openapi.json: the operation is found by method and route pattern, the status must be
 * declared, and a JSON body must validate against that status's schema (other content
 * types: status only). Every webhook body a test receiver gets (webhooks/helpers.ts) is
 * checked against the `webhooks` entry of its event (envelope only for `workflow.*` and
 * the test event). Mismatches are collected and fail the test file in its afterAll
 * (test/contract-setup.ts), naming the operation, the status and ajv's error path.
 *
 * The document is the same for every app the suite builds, so it is taken from the first
 * harness app and compiled once per worker process (kept on globalThis, which outlives a
 * file's module graph); each schema is compiled the first time a response needs it.
 */

type Json = Record<string, unknown>;

interface Operation {
  method: string;
  path: string;
  pattern: RegExp;
  /** Literal segments: `/api/jobs/calendar` wins over `/api/jobs/{id}`. */
  literals: number;
  responses: Record<string, Json>;
}

interface Contract {
  doc: Json;
  ajv: Ajv2020;
  operations: Operation[];
  validators: Map<string, ValidateFunction>;
}

interface State {
  contract?: Contract;
  mismatches: string[];
  /** Webhook bodies received before any app was built (validated once the document is known). */
  pendingEvents: string[];
  checkedResponses: number;
  checkedEvents: number;
}

const KEY = Symbol.for('crm.test.contract');
const g = globalThis as unknown as Record<symbol, { contract?: Contract } | undefined>;
/** Per process: the compiled document. Per file (module-level): what this file found. */
g[KEY] ??= {};
const shared = g[KEY];
const state: State = { mismatches: [], pendingEvents: [], checkedResponses: 0, checkedEvents: 0 };

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function resolve(doc: Json, pointer: string): unknown {
  let node: unknown = doc;
  for (const raw of pointer.replace(/^#\//, '').split('/')) {
    node = (node as Json | undefined)?.[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

function compile(doc: Json): Contract {
  const ajv = new Ajv2020({ strict: false, allErrors: false, logger: false, validateSchema: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(doc, 'openapi.json');
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      const responses = (op as Json).responses as Record<string, Json> | undefined;
      if (!responses) continue;
      const segments = path.split('/');
      const pattern = new RegExp(
        `^${segments.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('/')}$`,
      );
      operations.push({
        method: method.toUpperCase(),
        path,
        pattern,
        literals: segments.filter((s) => s && !s.startsWith('{')).length,
        responses,
      });
    }
  }
  operations.sort((a, b) => b.literals - a.literals);
  return { doc, ajv, operations, validators: new Map() };
}

const COMMITTED_DOCUMENT = new URL('../clients/typescript/openapi.json', import.meta.url);

/** Called by the harness with every app it builds; the first one's document is the contract. */
export function useDocumentOf(app: FastifyInstance): void {
  shared.contract ??= compile(app.swagger() as unknown as Json);
  const pending = state.pendingEvents.splice(0);
  for (const body of pending) checkEvent(body);
}

function validatorAt(c: Contract, pointer: string): ValidateFunction {
  let v = c.validators.get(pointer);
  if (!v) {
    v = c.ajv.compile({ $ref: `openapi.json${pointer}` });
    c.validators.set(pointer, v);
  }
  return v;
}

const describeErrors = (v: ValidateFunction) =>
  (v.errors ?? [])
    .slice(0, 3)
    .map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');

/** Checks one response of a harness app against the document. */
export function checkResponse(
  method: string,
  url: string,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
): void {
  const c = shared.contract;
  if (!c) return;
  const path = (url.split('?')[0] ?? '').replace(/\/+$/, '') || '/';
  const op = c.operations.find((o) => o.method === method.toUpperCase() && o.pattern.test(path));
  // Not in the document: hidden routes (/openapi.json, /healthz, the console) and paths that do not exist.
  if (!op) return;
  state.checkedResponses++;
  const where = `${op.method} ${op.path} → ${res.statusCode}`;
  const status = String(res.statusCode);
  let response = op.responses[status] ?? op.responses[`${status[0]}XX`] ?? op.responses.default;
  let pointer = `#/paths/${escapePointer(op.path)}/${op.method.toLowerCase()}/responses/${status}`;
  if (!response) {
    state.mismatches.push(`${where}: status not declared (declared: ${Object.keys(op.responses).join(', ')})`);
    return;
  }
  if (typeof response.$ref === 'string') {
    pointer = response.$ref;
    response = resolve(c.doc, pointer) as Json;
  }
  const contentType = String(res.headers['content-type'] ?? '');
  const isJson = /^application\/([\w.+-]*\+)?json\b/.test(contentType);
  if (!isJson) return;
  const content = response.content as Record<string, Json> | undefined;
  if (!content?.['application/json']) {
    if (res.body === '') return;
    state.mismatches.push(
      `${where}: a JSON body, but the document declares ${Object.keys(content ?? {}).join(', ') || 'no body'}`,
    );
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    state.mismatches.push(`${where}: content-type ${contentType} but the body is not JSON`);
    return;
  }
  const validate = validatorAt(c, `${pointer}/content/application~1json/schema`);
  if (!validate(body)) state.mismatches.push(`${where}: ${describeErrors(validate)}`);
}

/** Checks one webhook body a test receiver got against the `webhooks` entry of its event. */
export function checkEvent(raw: string): void {
  if (raw === '') return;
  const c = shared.contract;
  if (!c) {
    state.pendingEvents.push(raw);
    return;
  }
  let body: Json;
  try {
    body = JSON.parse(raw) as Json;
  } catch {
    state.mismatches.push(`webhook body is not JSON: ${raw.slice(0, 80)}`);
    return;
  }
  state.checkedEvents++;
  const event = String(body.event);
  const webhooks = (c.doc.webhooks ?? {}) as Record<string, unknown>;
  // Workflow events and the test event are outside the catalog: the envelope is all the document promises.
  const pointer = webhooks[event]
    ? `#/webhooks/${escapePointer(event)}/post/requestBody/content/application~1json/schema`
    : '#/components/schemas/WebhookDelivery';
  const validate = validatorAt(c, pointer);
  if (!validate(body)) state.mismatches.push(`webhook ${event}: ${describeErrors(validate)}`);
}

/** What this file found; empties the list and the counts. */
export function takeReport(): { mismatches: string[]; checkedResponses: number; checkedEvents: number } {
  // A file that builds no harness app (its server runs as a real process) still checks what its
  // receivers got, against the committed document: test/platform/client.test.ts keeps that file
  // identical to the served /openapi.json.
  if (state.pendingEvents.length > 0 && !shared.contract) {
    shared.contract = compile(JSON.parse(readFileSync(COMMITTED_DOCUMENT, 'utf8')) as Json);
    for (const body of state.pendingEvents.splice(0)) checkEvent(body);
  }
  for (const body of state.pendingEvents.splice(0)) state.mismatches.push(`webhook body never checked: ${body}`);
  const mismatches = state.mismatches.splice(0);
  const { checkedResponses, checkedEvents } = state;
  // Test files may share this module (vitest's isolate: false): each file counts from zero.
  state.checkedResponses = 0;
  state.checkedEvents = 0;
  return { mismatches, checkedResponses, checkedEvents };
}
