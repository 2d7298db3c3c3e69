import { readFileSync } from 'node:fs';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { sql } from 'drizzle-orm';
import Fastify, { type FastifyInstance, type FastifyServerFactory } from 'fastify';
import type { Config } from './config.js';
import consolePlugin from './console/console.plugin.js';
import { type Database, rowsOf } from './db/client.js';
import { type DatabaseOutage, watchDatabase } from './db/outage.js';
import { isDatabaseUnavailable } from './db/pg-errors.js';
import { chooseRowsPath } from './db/values.js';
import { EVENT_PAYLOADS, EVENT_RESOURCES } from './modules/event-payloads.js';
import { accountMail, modules } from './modules/index.js';
import { access } from './platform/access.js';
import { type Auth, createAuth } from './platform/auth/better-auth.js';
import { PrincipalResolver } from './platform/auth/principal.js';
import { GenerationReader, listenForRevocations } from './platform/auth/revocations.js';
import { installErrorHandler, sendError } from './platform/error-handler.js';
import { AppError } from './platform/errors.js';
import { idempotency } from './platform/idempotency.js';
import { newId } from './platform/ids.js';
import { installInputGuard, jsonTooDeep, MAX_JSON_DEPTH } from './platform/input-guard.js';
import { createMailer, type Mailer } from './platform/mail.js';
import { finishDocument, type RegisteredRoute } from './platform/openapi.js';
import { createLimiters, type Limiters } from './platform/rate-limit.js';
import { ErrorBody, NoQuery } from './platform/schemas.js';
import { lazySerializerFactory, lazyValidatorCompiler } from './platform/validation.js';

/** What route modules receive: everything they may need, passed in rather than imported. */
export interface AppDeps {
  config: Config;
  database: Database;
  auth: Auth;
  resolver: PrincipalResolver;
  limiters: Limiters;
  mailer: Mailer;
  /** Whether the database is reachable; logs an outage once (src/db/outage.ts). */
  outage: DatabaseOutage;
}

export type App = FastifyInstance;

export type { RegisteredRoute };

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppDeps;
    /** Every route registered on the app, in order (filled by an onRoute hook). */
    registeredRoutes: RegisteredRoute[];
  }
}

export interface BuildOptions {
  /** Registers extra routes before the app is sealed (tests: a route that throws, say). */
  extraRoutes?: (app: FastifyInstance) => void | Promise<void>;
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: NodeJS.WritableStream;
  /**
   * The HTTP server the app will serve on, already listening (`npm start` listens before the
   * database is ready: src/platform/starting.ts); the app then never calls `listen` itself.
   */
  serverFactory?: FastifyServerFactory;
}

/** How many migrations the code ships; /readyz is ready only when the database has them all. */
const SHIPPED_MIGRATIONS = (
  JSON.parse(readFileSync(new URL('../drizzle/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] }
).entries.length;

const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the HTTP application; never listens (tests call `inject` or `listen` themselves). */
export async function buildApp(
  config: Config,
  database: Database,
  options: BuildOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-api-key"]'],
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    bodyLimit: 1024 * 1024,
    // A hop count trusts that many proxies nearest to us (Fastify's function form of the same rule).
    trustProxy:
      typeof config.trustProxy === 'number'
        ? (_address: string, hop: number) => hop < (config.trustProxy as number)
        : config.trustProxy,
    // false: with a header name set, Fastify would take the incoming value unchecked; genReqId checks it.
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : newId('req');
    },
    ajv: { customOptions: { removeAdditional: false } },
    // Each route's response serializers are compiled on first use, not at start-up (platform/validation.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory() as never } },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
    // What the router refuses before any route runs (a path segment over maxParamLength, a broken
    // %-escape) answers like every other bad input: 400 VALIDATION_FAILED in the error shape, not
    // Fastify's own body (and 414, which the document and the error catalogue do not have).
    frameworkErrors: (error, request, reply) =>
      sendError(
        request,
        reply,
        'VALIDATION_FAILED',
        400,
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'A path segment is longer than 200 characters'
          : 'The path is not a valid URL',
      ),
  }).withTypeProvider<TypeBoxTypeProvider>();

  const outage = watchDatabase(database, app.log);
  await chooseRowsPath(database);
  const mailer = createMailer(config);
  const auth = createAuth(
    config,
    database.platformDb,
    app.log,
    accountMail({ database, mailer, baseUrl: config.baseUrl }),
  );
  const deps: AppDeps = {
    config,
    database,
    auth,
    // On PostgreSQL several API processes share the database: revocations reach all of them
    // through the generation counter (src/platform/auth/revocations.ts).
    resolver: new PrincipalResolver(
      auth,
      database.db,
      database.pool ? new GenerationReader(database.platformDb) : undefined,
    ),
    limiters: createLimiters(config, app.log, database.platformDb),
    mailer,
    outage,
  };
  app.decorate('deps', deps);
  const registeredRoutes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', registeredRoutes);
  const unlistenRevocations = await listenForRevocations(database, config.listenDatabaseUrl, () =>
    deps.resolver.invalidate(),
  );
  app.addHook('onClose', async () => {
    await unlistenRevocations();
    await deps.limiters.close();
    deps.mailer.close();
    outage.close();
  });

  app.setValidatorCompiler(lazyValidatorCompiler);
  installErrorHandler(app, { outage });
  app.addSchema(ErrorBody);

  // JSON only: an empty body counts as no body (action routes), text/plain is refused with 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (_req: unknown, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
      const text = body.toString().trim();
      if (text === '') return done(null, undefined);
      if (jsonTooDeep(text)) {
        return done(new AppError('VALIDATION_FAILED', `Body nests deeper than ${MAX_JSON_DEPTH} levels`), undefined);
      }
      try {
        done(null, JSON.parse(text));
      } catch {
        const err = new SyntaxError('Body is not valid JSON');
        done(err, undefined);
      }
    },
  );

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  installInputGuard(app);
  // Action routes accept no body at all (decisions §3): validate and handle it as `{}`.
  app.addHook('preValidation', async (request) => {
    if ((request.body === undefined || request.body === null) && request.routeOptions.schema?.body) request.body = {};
  });

  // Graceful shutdown: close() waits for every open connection, and a keep-alive connection
  // would idle on for its timeout. Responses sent while closing end their connection instead.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('Connection', 'close');
    return payload;
  });

  await app.register(cors, {
    // Closed unless CORS_ORIGINS lists browser origins (the office app's, say).
    origin: config.corsOrigins.length > 0 ? config.corsOrigins : false,
    credentials: true,
    exposedHeaders: ['X-Request-Id', 'X-Total-Count', 'Link', 'RateLimit', 'RateLimit-Policy', 'Retry-After'],
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Field-Service CRM API',
        version: PACKAGE_VERSION,
        description:
          'Multi-tenant CRM for lawn-care, landscaping and snow-removal businesses. Every success body is `{data}`; every error is `{error: {message, code, requestId, details?}}`.',
      },
    },
    // Relative: "Try it out" in /docs calls whichever origin served the page (localhost, 127.0.0.1, a proxy).
    transformObject: (documents) =>
      finishDocument((documents as { openapiObject: Record<string, unknown> }).openapiObject, registeredRoutes, {
        version: PACKAGE_VERSION,
        servers: [{ url: '/', description: 'The server that serves this document' }],
        webhooks: { payloads: EVENT_PAYLOADS, resources: EVENT_RESOURCES },
      }),
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  // Every documented route also declares the error shape, so errors are documented and serialised by schema.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as
      | {
          response?: Record<string, unknown>;
          hide?: boolean;
          description?: string;
          body?: unknown;
          querystring?: unknown;
          params?: unknown;
        }
      | undefined;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config = route.config ?? {};
    for (const method of methods) {
      registeredRoutes.push({
        method,
        url: route.url,
        hidden: schema?.hide === true,
        responseStatuses: Object.keys(schema?.response ?? {}),
        hasDescription: typeof schema?.description === 'string' && schema.description.trim() !== '',
        access: config.access ?? (route.url.startsWith('/api/') ? 'tenant' : 'public'),
        roles: config.roles,
        feature: config.feature,
        errors: config.errors ?? [],
        inputs: schema,
      });
    }
    if (schema?.response && !schema.hide) {
      schema.response = { ...schema.response, '4xx': { $ref: 'ErrorBody#' }, '5xx': { $ref: 'ErrorBody#' } };
    }
    // A documented read with no query parameters takes none: `?stauts=overdue` is a 400 there too
    // (query schemas themselves refuse unknown parameters: platform/validation.ts). Not the
    // customer's mailed links (/api/portal/…), which mail tools may tag with ?utm_… parameters.
    if (
      schema &&
      !schema.hide &&
      !schema.querystring &&
      methods.includes('GET') &&
      route.url.startsWith('/api/') &&
      !route.url.startsWith('/api/portal/')
    ) {
      schema.querystring = NoQuery;
    }
  });

  await app.register(access, { resolver: deps.resolver, limiters: deps.limiters });
  await app.register(idempotency, { db: database.db });

  app.get('/openapi.json', { schema: { hide: true }, config: { access: 'public' } }, async () => app.swagger());
  app.get('/healthz', { schema: { hide: true }, config: { access: 'public' } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, config: { access: 'public' } }, async (_request, reply) => {
    try {
      const [row] = rowsOf<{ n: number }>(
        await database.db.execute(sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`),
      );
      const applied = Number(row?.n ?? 0);
      if (applied < SHIPPED_MIGRATIONS) {
        return reply
          .code(503)
          .send({ status: 'migrations pending', migrations: applied, expected: SHIPPED_MIGRATIONS });
      }
      // Redis only shares rate-limit counters: without it the API still works (per-process
      // counters), so the instance stays in rotation (200) and says it is degraded.
      const redis = deps.limiters.redisCheck();
      const checks = { database: 'ok', redis };
      if (redis === 'unreachable') return { status: 'degraded', migrations: applied, checks };
      return { status: 'ready', migrations: applied, checks };
    } catch (err) {
      // Asked afresh each time (no cache): 503 for as long as the database is away, 200 as soon as it answers.
      if (isDatabaseUnavailable(err)) outage.report(err);
      return reply.code(503).send({ status: 'unavailable', checks: { database: 'unreachable' } });
    }
  });

  for (const register of modules) await app.register(register);
  await app.register(consolePlugin);
  if (options.extraRoutes) await app.register(async (child) => options.extraRoutes?.(child));
  await app.ready();
  return app;
}
