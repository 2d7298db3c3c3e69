import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { newId } from './ids.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The HTTP server of `npm start`, answering from the first moment (issue 29 item 3).
 *
 * Opening the database and applying migrations can take many seconds on a loaded machine or
 * a first start; a closed port in the meantime looks like a dead process to a health check
 * and to a person. So the server listens before any of that: `/healthz` answers 200 (the
 * process is alive), `/readyz` 503 naming what start-up waits for, and every other request
 * 503 `SERVICE_UNAVAILABLE` with `Retry-After`, in the service's error shape. Once the app is
 * built, `handOver` routes every later request to it (Fastify's handler, given to the app
 * through `serverFactory`, so the app serves on this very server).
 */
export interface Starting {
  server: Server;
  /** What start-up is doing now, for /readyz and the 503 message ("applying database migrations"). */
  step(what: string): void;
  /** From now on, every request goes to `handler`. */
  handOver(handler: Handler): void;
}

const RETRY_AFTER_SECONDS = 2;

export function startingServer(): Starting {
  let current = 'starting';
  let app: Handler | undefined;
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
      res.end(JSON.stringify(body));
    };
    // The body is not read: drain it so the connection can be reused.
    req.resume();
    if (path === '/healthz') return json(200, { status: 'ok' });
    const retry = { 'retry-after': String(RETRY_AFTER_SECONDS) };
    if (path === '/readyz') return json(503, { status: 'starting', waitingFor: current }, retry);
    const requestId = newId('req');
    return json(
      503,
      {
        error: {
          message: `The service is starting (${current}); retry in ${RETRY_AFTER_SECONDS} s`,
          code: 'SERVICE_UNAVAILABLE',
          requestId,
        },
      },
      { ...retry, 'x-request-id': requestId },
    );
  };
  const server = createServer((req, res) => (app ?? answer)(req, res));
  return {
    server,
    step: (what) => {
      current = what;
    },
    handOver: (handler) => {
      app = handler;
    },
  };
}
