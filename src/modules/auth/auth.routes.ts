import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { sql } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimiterRes } from 'rate-limiter-flexible';
import type { Static } from 'typebox';
import { AppError, type ErrorCode } from '../../platform/errors.js';
import { consumeRequest, rateLimitHeaders, SIGN_IN_FAILURES } from '../../platform/rate-limit.js';
import {
  PASS_THROUGH_BODIES,
  PasswordResetBody,
  PasswordResetDone,
  PasswordResetRequestBody,
  PasswordResetRequested,
  SessionResponse,
  SignedOut,
  SignInBody,
  SignUpBody,
  type User,
} from './auth.schemas.js';

/** Reset mails asked for one address per minute: enough for a typo, too few to flood an inbox. */
const RESET_REQUESTS_PER_MINUTE = 3;
const RESET_ANSWER = 'If an account uses this email, a link to choose a new password is on its way';

/**
 * /api/auth/* is Better Auth's. The documented routes (sign-up, sign-in, sign-out,
 * session) are declared here with schemas so they validate, appear in /openapi.json
 * and answer in the service's `{data}` / `{error}` shapes; everything else under
 * /api/auth is passed through untouched (hidden from the docs).
 */
export default async function authRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { auth, config, database, limiters, resolver } = app.deps;
  const trusted = new Set([new URL(config.baseUrl).origin, ...config.corsOrigins]);

  /** Browsers always send Origin on POST; a foreign one is a cross-site request: refuse it. */
  function checkOrigin(request: FastifyRequest) {
    const origin = request.headers.origin;
    if (origin !== undefined && !trusted.has(origin)) {
      throw new AppError('FORBIDDEN', `Origin ${origin} is not allowed`);
    }
  }

  async function forward(request: FastifyRequest, reply: FastifyReply, wrap: boolean): Promise<unknown> {
    checkOrigin(request);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value === undefined || name === 'content-length' || name === 'host') continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    // The address Better Auth records on the session is the socket's, never a client-supplied header.
    headers.set('x-forwarded-for', request.ip);
    const hasBody = request.body !== undefined && request.method !== 'GET';
    if (hasBody) headers.set('content-type', 'application/json');
    const response = await auth.handler(
      new Request(new URL(request.url, config.baseUrl), {
        method: request.method,
        headers,
        body: hasBody ? JSON.stringify(request.body) : undefined,
      }),
    );
    for (const cookie of response.headers.getSetCookie()) reply.header('set-cookie', cookie);
    const text = await response.text();
    const body = parseJson(text);
    if (response.status >= 500) {
      // Better Auth turns a failed session query into a bare 500 (the driver's error does not
      // survive into its Response): ask the database. Unreachable → that error, which the
      // error handler answers 503; reachable → a genuine 500.
      await database.platformDb.execute(sql`SELECT 1`);
      throw new Error(`Better Auth answered ${response.status} for ${request.method} ${request.url.split('?')[0]}`);
    }
    if (response.status >= 400) {
      const codes: Record<number, ErrorCode> = {
        400: 'VALIDATION_FAILED',
        401: 'UNAUTHENTICATED',
        403: 'FORBIDDEN',
        404: 'NOT_FOUND',
        422: 'CONFLICT',
        429: 'RATE_LIMITED',
      };
      const message =
        typeof body?.message === 'string'
          ? body.message
          : response.status === 404
            ? `Route ${request.method} ${request.url.split('?')[0]} not found`
            : 'Authentication failed';
      throw new AppError(codes[response.status] ?? 'VALIDATION_FAILED', message);
    }
    resolver.invalidate();
    reply.code(response.status === 201 ? 201 : 200);
    return wrap ? { data: body } : body;
  }

  app.post(
    '/api/auth/sign-up/email',
    {
      config: { access: 'public', errors: [403, 409] },
      schema: {
        tags: ['auth'],
        operationId: 'signUp',
        summary: 'Create a user with email and password; sets the session cookie',
        description:
          'Returns the user and session and sets the `better-auth.session_token` cookie. A taken email answers 4xx without revealing more.',
        security: [],
        body: SignUpBody,
        response: { 200: SessionResponse },
      },
    },
    async (request, reply) => {
      const result = (await forward(request, reply, false)) as { user: Static<typeof User> };
      return { data: { user: result.user } };
    },
  );

  app.post(
    '/api/auth/sign-in/email',
    {
      config: { access: 'public', errors: [401, 403] },
      schema: {
        tags: ['auth'],
        operationId: 'signIn',
        summary: 'Sign in with email and password; sets the session cookie',
        description: `At most ${SIGN_IN_FAILURES.points} failed attempts per email per 15 minutes, then 429.`,
        security: [],
        body: SignInBody,
        response: { 200: SessionResponse },
      },
    },
    async (request, reply) => {
      const email = request.body.email.toLowerCase();
      const state = await limiters.signInFailures.get(email).catch(() => null);
      if (state && state.consumedPoints >= SIGN_IN_FAILURES.points) {
        throw new AppError('RATE_LIMITED', 'Too many failed sign-in attempts for this email; try again later', {
          headers: {
            ...rateLimitHeaders(SIGN_IN_FAILURES.points, SIGN_IN_FAILURES.duration, state),
            'Retry-After': String(Math.max(1, Math.ceil(state.msBeforeNext / 1000))),
          },
        });
      }
      try {
        const result = (await forward(request, reply, false)) as { user: Static<typeof User> };
        return { data: { user: result.user } };
      } catch (err) {
        if (err instanceof AppError && err.status === 401) {
          await limiters.signInFailures.consume(email).catch((e: unknown) => {
            if (!(e instanceof RateLimiterRes)) throw e;
          });
        }
        throw err;
      }
    },
  );

  app.post(
    '/api/auth/sign-out',
    {
      config: { access: 'public', errors: [403] },
      schema: {
        tags: ['auth'],
        operationId: 'signOut',
        summary: 'End the current session',
        description: 'Revokes the session behind the cookie and clears it. Harmless without a session.',
        response: { 200: SignedOut },
      },
    },
    async (request, reply) => ({ data: { success: true, ...((await forward(request, reply, false)) ?? {}) } }),
  );

  app.get(
    '/api/auth/get-session',
    {
      // Public so it answers "not signed in" itself (401 UNAUTHENTICATED); a foreign Origin is refused (403).
      config: { access: 'public', errors: [401, 403] },
      schema: {
        tags: ['auth'],
        operationId: 'getSession',
        summary: 'The current user and session',
        description: 'Answers 401 `UNAUTHENTICATED` when the request carries no valid session.',
        response: { 200: SessionResponse },
      },
    },
    async (request, reply) => {
      const result = (await forward(request, reply, false)) as Static<typeof SessionResponse>['data'] | null;
      if (!result) throw new AppError('UNAUTHENTICATED', 'Not signed in');
      return { data: result };
    },
  );

  app.post(
    '/api/auth/request-password-reset',
    {
      config: { access: 'public', errors: [403, 429] },
      schema: {
        tags: ['auth'],
        operationId: 'requestPasswordReset',
        summary: 'Mail a link to choose a new password',
        description: `Answers the same for every address, known or not. A known one is mailed a link to the console's reset page (\`/app/reset-password?token=…\`), valid once for an hour, through the mail outbox. At most ${RESET_REQUESTS_PER_MINUTE} requests a minute per address, then 429.`,
        security: [],
        body: PasswordResetRequestBody,
        response: { 200: PasswordResetRequested },
      },
    },
    async (request, reply) => {
      // Counted per address (the body is parsed by now; a route's own `rateLimit` runs before it is).
      reply.headers(
        await consumeRequest(limiters, request.body.email.toLowerCase(), {
          name: 'password-reset',
          points: RESET_REQUESTS_PER_MINUTE,
        }),
      );
      await forward(request, reply, false);
      return { data: { status: true as const, message: RESET_ANSWER } };
    },
  );

  app.post(
    '/api/auth/reset-password',
    {
      config: { access: 'public', errors: [403] },
      schema: {
        tags: ['auth'],
        operationId: 'resetPassword',
        summary: 'Set a new password with the token of a reset mail',
        description:
          'The token works once and for an hour; an invalid, expired or used one answers 400. Every session of the user ends (sign in again with the new password).',
        security: [],
        body: PasswordResetBody,
        response: { 200: PasswordResetDone },
      },
    },
    async (request, reply) => {
      try {
        await forward(request, reply, false);
      } catch (err) {
        if (err instanceof AppError && err.status === 400 && /token/i.test(err.message)) {
          throw new AppError(
            'VALIDATION_FAILED',
            'token: this reset link is invalid, expired or already used; ask for a new one',
          );
        }
        throw err;
      }
      return { data: { status: true as const } };
    },
  );

  // Better Auth's other routes that take a body: validated here first (400 naming the field),
  // then passed through, unwrapped and undocumented like the rest below.
  for (const [path, body] of Object.entries(PASS_THROUGH_BODIES)) {
    app.post(`/api/auth/${path}`, { config: { access: 'public' }, schema: { hide: true, body } }, (request, reply) =>
      forward(request, reply, false),
    );
  }

  // The rest of Better Auth (password reset, session list, …), unwrapped and undocumented here.
  app.route({
    method: ['GET', 'POST'],
    url: '/api/auth/*',
    config: { access: 'public' },
    schema: { hide: true },
    handler: (request, reply) => forward(request, reply, false),
  });
}

/** Better Auth answers JSON, except for a few plain-text replies (a disabled path's "Not Found"). */
function parseJson(text: string): Record<string, unknown> | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown> | null;
  } catch {
    return { message: text };
  }
}
