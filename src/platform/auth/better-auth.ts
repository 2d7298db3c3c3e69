import { hash, verify } from '@node-rs/argon2';
import { drizzleAdapter } from 'better-auth/adapters/drizzle';
// The minimal entry: the same Better Auth without Kysely (its own database dialects and
// migrations, which this app never uses: Drizzle's adapter, drizzle/ migrations). Kysely's 260
// modules were about a third of Better Auth's import at every start.
import { betterAuth } from 'better-auth/minimal';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import type { Db } from '../../db/client.js';
import { isDatabaseUnavailable } from '../../db/pg-errors.js';
import { accounts, sessions, users, verifications } from '../../db/schema/index.js';
import { asPlatform } from '../cross-tenant.js';
import { newId } from '../ids.js';
import { bumpAuthGenerationAsPlatform } from './revocations.js';
import { lastOrganizationOf } from './sessions.js';

/** Argon2id (OWASP's first choice) with @node-rs/argon2's defaults: m=19 MiB, t=2, p=1. */
const ARGON2ID = 2;

/**
 * Better Auth owns email/password identity and sessions under /api/auth.
 * Its own CSRF/origin check is off because it refuses non-browser clients
 * (Node fetch sends sec-fetch-* without Origin); the auth routes apply our
 * rule instead: a request that carries an untrusted Origin is refused (403),
 * a request without one (curl, server-side code) is allowed.
 */
/** Mails Better Auth asks for, written above the platform (src/flows/) and handed in by the app. */
export interface AccountMail {
  /**
   * Mails a password-reset link holding `token` (for the console's reset page). Called for known
   * emails only; the route answers the same for unknown ones.
   */
  passwordReset(user: { id: string; email: string; name: string }, token: string): Promise<void>;
}

/** A reset link works for an hour and once (Better Auth consumes the token when it is used). */
export const RESET_TOKEN_TTL_SECONDS = 60 * 60;

export function createAuth(config: Config, db: Db, log: FastifyBaseLogger, accountMail?: AccountMail) {
  return betterAuth({
    appName: 'Service',
    baseURL: config.baseUrl,
    basePath: '/api/auth',
    secret: config.authSecret,
    database: drizzleAdapter(db, {
      provider: 'pg',
      schema: { user: users, session: sessions, account: accounts, verification: verifications },
    }),
    emailAndPassword: {
      enabled: true,
      minPasswordLength: 8,
      maxPasswordLength: 128,
      password: {
        hash: (password) => hash(password, { algorithm: ARGON2ID }),
        verify: ({ hash: digest, password }) => verify(digest, password),
      },
      resetPasswordTokenExpiresIn: RESET_TOKEN_TTL_SECONDS,
      // A reset is what someone does who fears another has their password: every session ends,
      // and every process drops what it cached of them before the answer (revocations.ts).
      revokeSessionsOnPasswordReset: true,
      onPasswordReset: async () => {
        await asPlatform(db, (tx) => bumpAuthGenerationAsPlatform(tx));
      },
      ...(accountMail
        ? {
            sendResetPassword: async ({ user, token }) => {
              // The answer must not depend on whether the mail could be queued (it would tell
              // a caller that the address has an account): a failure is logged, not thrown.
              await accountMail.passwordReset(user, token).catch((err: unknown) => {
                log.error({ err }, 'password reset mail could not be queued');
              });
            },
          }
        : {}),
    },
    // Reset tokens are kept hashed: a copy of the database cannot be used to take over accounts.
    verification: { storeIdentifier: 'hashed' },
    session: {
      additionalFields: {
        activeOrganizationId: { type: 'string', required: false, input: false },
      },
    },
    databaseHooks: {
      session: {
        create: {
          // A new sign-in starts in the organization the user last worked in, so tenant routes work at once.
          before: async (session) => {
            const activeOrganizationId = await lastOrganizationOf(db, session.userId);
            return activeOrganizationId ? { data: { ...session, activeOrganizationId } } : undefined;
          },
        },
        // A session ended (sign-out, expiry, revoked): every process drops what it cached for it
        // before the request answers. Run after the delete committed (Better Auth queues it so),
        // in a transaction of its own (revocations.ts; drizzle/0042 replaced the trigger).
        delete: {
          after: async () => {
            await asPlatform(db, (tx) => bumpAuthGenerationAsPlatform(tx));
          },
        },
      },
    },
    trustedOrigins: [new URL(config.baseUrl).origin, ...config.corsOrigins],
    // Throttling is ours (platform/rate-limit.ts): one policy, one store, shared by all processes.
    rateLimit: { enabled: false },
    // list-sessions returns raw session tokens to page scripts, which would undo HttpOnly. The
    // social-sign-in routes serve providers this service does not configure: off, not passed through.
    disabledPaths: [
      '/list-sessions',
      '/sign-in/social',
      '/callback/:id',
      '/link-social',
      '/unlink-account',
      '/refresh-token',
      '/get-access-token',
      '/account-info',
    ],
    telemetry: { enabled: false },
    logger: {
      disabled: config.nodeEnv === 'test',
      // Into the service's log; a database outage is logged once (src/db/outage.ts), not per request here.
      log: (level, message, ...args) => {
        if (!args.some(isDatabaseUnavailable))
          log[level]({ err: args.find((a) => a instanceof Error) }, `better-auth: ${message}`);
      },
    },
    // A failure that is not one of Better Auth's own answers (the database is unreachable,
    // say) is thrown to the service's error handler (503 or 500) rather than a bare 500.
    onAPIError: { throw: true },
    advanced: {
      disableCSRFCheck: true,
      useSecureCookies: config.baseUrl.startsWith('https://'),
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax' },
      ipAddress: { ipAddressHeaders: ['x-forwarded-for'] },
      database: { generateId: ({ model }) => newId(model === 'user' ? 'usr' : model.slice(0, 4)) },
    },
  });
}

export type Auth = ReturnType<typeof createAuth>;
