import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError, validationDetails } from '../../platform/error-handler.js';
import { AppError } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { consumeRequest, countRequest, RATE_LIMITED_MESSAGE } from '../../platform/rate-limit.js';
import { type Actor, inTenant } from '../../platform/tenancy.js';
import type { AjvIssue } from '../../platform/validation-messages.js';
import { newChallenge, spendSolution } from './requests.altcha.js';
import { renderOutcomePage } from './requests.page.js';
import { registerBookingPage, sendPage } from './requests.page.routes.js';
import { noSuchForm, organizationOfSlug, PER_ADDRESS, PER_ORGANIZATION, requireSlug } from './requests.public.js';
import {
  AltchaChallenge,
  PublicRequestBody,
  PublicRequestCreated,
  type PublicRequestInput,
  SlugParams,
} from './requests.schemas.js';
import { createRequest } from './requests.service.js';

/** Who acts for a request from the public: nobody signed in, the organization's booking form. */
const PUBLIC_FORM: Actor = { kind: 'system', id: 'booking-form', role: 'member' };

const FORM = 'application/x-www-form-urlencoded';
const isFormPost = (request: FastifyRequest) => (request.headers['content-type'] ?? '').toLowerCase().startsWith(FORM);

/**
 * A browser's form post as the JSON body: the address fields nested, the repeated
 * `serviceIds` / `preferredDates` as arrays, empty optional fields left out, the SMS box's
 * "on" as true. Unknown fields stay, so they are refused as in JSON.
 */
export function formToBody(text: string): Record<string, unknown> {
  const params = new URLSearchParams(text);
  const body: Record<string, unknown> = {};
  const address: Record<string, unknown> = {};
  const put = (target: Record<string, unknown>, key: string, value: unknown) =>
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  const many = new Set(['serviceIds', 'preferredDates']);
  const optional = new Set(['lastName', 'email', 'phone', 'state', 'zip', 'preferredTime', 'website']);
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    if (many.has(key)) {
      const kept = values.filter((v) => v.trim() !== '');
      if (kept.length > 0) put(body, key, kept);
    } else if (key === 'smsConsent') {
      put(
        body,
        key,
        values.some((v) => v === 'on' || v === 'true'),
      );
    } else if (optional.has(key) && (values[0] ?? '') === '') {
      // an empty optional field is no answer
    } else if (['street', 'city', 'state', 'zip'].includes(key)) {
      put(address, key, values[0]);
    } else {
      put(body, key, values.length === 1 ? values[0] : values);
    }
  }
  put(body, 'address', address);
  return body;
}

/** What a refused request says: the JSON error's message (validation issues named by field). */
function messageOf(err: unknown): { status: number; message: string; headers?: Record<string, string> } {
  if (err instanceof AppError) {
    return { status: err.status, message: err.message, ...(err.headers ? { headers: err.headers } : {}) };
  }
  const e = err as FastifyError;
  if (e?.validation) {
    const details = validationDetails(e.validation as AjvIssue[], e.validationContext);
    return { status: 400, message: details.map((d) => `${d.field} ${d.message}`).join('; ') || 'Request is invalid' };
  }
  throw err;
}

/**
 * The public side of requests (operations.md §12): no session, the booking slug in the path.
 * Registered in its own scope: only these routes read browser form posts.
 */
export default async function publicRequestRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config, limiters } = app.deps;
  const tags = ['requests'];
  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => {
    done(null, formToBody(body.toString()));
  });
  registerBookingPage(fastify);

  app.get(
    '/api/public/:slug/challenge',
    {
      config: { access: 'public' },
      schema: {
        tags,
        operationId: 'getBookingChallenge',
        summary: 'An ALTCHA proof-of-work challenge for the booking form (no session)',
        description:
          'The URL the ALTCHA widget’s `challenge` attribute points at. The challenge is signed with a key derived from AUTH_SECRET and the organization, expires in 10 minutes, and its solution is accepted once by POST /api/public/{slug}/requests. An unknown slug and a switched-off form are the same 404.',
        security: [],
        params: SlugParams,
        response: { 200: AltchaChallenge },
      },
    },
    async (request, reply) => {
      const organizationId = await organizationOfSlug(database.db, request.params.slug);
      if (!organizationId) throw noSuchForm();
      await inTenant(database.db, organizationId, PUBLIC_FORM, (ctx) => requireSlug(ctx, request.params.slug));
      const challenge = await newChallenge(config.authSecret, organizationId);
      return reply
        .header('cache-control', 'no-store')
        .send({ parameters: challenge.parameters, signature: challenge.signature ?? '' });
    },
  );

  app.post(
    '/api/public/:slug/requests',
    {
      config: { access: 'public', countsGeneralLimit: true },
      // The address limit first, before the body is read or parsed, before any database read and before the caller's
      // general budget (counted here, not by the access hook, which would ask Redis first when REDIS_URL is set): a
      // flood from one address is refused for the cost of a counter (and, in each process, of an in-memory "blocked
      // until" once the shared limiter said no: platform/rate-limit.ts). The refusal is sent from here, not thrown: no
      // error is built and passed through the error handler for each of a flood's requests (bench public-requests).
      onRequest: async (request, reply) => {
        const { slug } = request.params as { slug: string };
        const address = await countRequest(limiters, `${slug}:${request.ip}`, PER_ADDRESS);
        const outcome = address.allowed ? await countRequest(limiters, `ip:${request.ip}`) : address;
        if (outcome.allowed) {
          // The address budget's headers last, as when the access hook counted the general one first.
          reply.headers(outcome.headers);
          reply.headers(address.headers);
          return;
        }
        reply.headers(outcome.headers);
        if (isFormPost(request)) {
          return sendPage(reply, renderOutcomePage({ ok: false, status: 429, message: RATE_LIMITED_MESSAGE, slug }));
        }
        return sendError(request, reply, 'RATE_LIMITED', 429, RATE_LIMITED_MESSAGE);
      },
      // Checked in the handler, after the address limit and the slug: a flood or a wrong slug costs no validation,
      // and a browser's form post hears about a wrong field as a page.
      attachValidation: true,
      schema: {
        tags,
        operationId: 'createPublicRequest',
        summary: 'Send a request from the public booking form (no session; JSON or a browser form post)',
        description:
          'Email or phone is required; preferredDates (at most 3) are today or later in the organization’s timezone; serviceIds are bookable services of this organization; unknown fields → 400. ' +
          '`altcha` is the ALTCHA widget’s payload for a challenge of GET /api/public/{slug}/challenge: missing, forged, expired or already used → 400. ' +
          '`website` is a honeypot: filled → 201 and nothing is stored. ' +
          'More than 5 a minute from one address to one organization, or 200 a day to one organization → 429 with Retry-After. ' +
          'An unknown slug and a switched-off form are the same 404. The answer names nothing of the organization. ' +
          `A browser form post (${FORM}, fields flat: street, city, state, zip; serviceIds and preferredDates repeated; smsConsent=on) is answered with a thank-you page (or a page naming what is wrong) instead of JSON.`,
        security: [],
        params: SlugParams,
        body: PublicRequestBody,
        response: { 201: PublicRequestCreated },
      },
    },
    async (request, reply) => {
      const form = isFormPost(request);
      const { slug } = request.params;
      try {
        const organizationId = await organizationOfSlug(database.db, slug);
        if (!organizationId) throw noSuchForm();
        if (request.validationError) throw request.validationError;
        const body = request.body as PublicRequestInput;
        if (body.website !== undefined && body.website.trim() !== '') {
          // The honeypot: a bot is told it worked, and nothing is stored, mailed or counted.
          return answer(reply, form, slug, { id: newId('req'), status: 'new' as const });
        }
        const created = await inTenant(database.db, organizationId, PUBLIC_FORM, async (ctx) => {
          await requireSlug(ctx, slug);
          await spendSolution(ctx, config.authSecret, body.altcha);
          reply.headers(await consumeRequest(limiters, organizationId, PER_ORGANIZATION));
          return createRequest(ctx, body, { ip: request.ip, at: new Date() });
        });
        return answer(reply, form, slug, { id: created.id, status: 'new' as const });
      } catch (err) {
        if (!form) throw err;
        const refused = messageOf(err);
        if (refused.headers) reply.headers(refused.headers);
        return sendPage(
          reply,
          renderOutcomePage({ ok: false, status: refused.status, message: refused.message, slug }),
        );
      }
    },
  );

  function answer(reply: FastifyReply, form: boolean, slug: string, data: { id: string; status: 'new' }) {
    if (form) return sendPage(reply, renderOutcomePage({ ok: true, status: 201, slug }));
    return reply.code(201).send({ data });
  }
}
