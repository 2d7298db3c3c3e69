import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import { newId } from './ids.js';

/**
 * Graceful drain of an HTTP/1.1 server without resetting a connection (issue 18 item 4).
 *
 * Why not just `app.close()`: since Node 19, `http.Server#close()` calls
 * `closeIdleConnections()` at once. A keep-alive socket that looks idle to the server
 * may already carry the client's next request in the kernel buffer (the event loop has
 * not read it yet); destroying it answers that request with ECONNRESET. And closing the
 * listening socket resets every connection the kernel has completed but Node has not yet
 * accepted (the accept queue): a client that just opened one has sent its request on it.
 * Both were measured under the 20-connection test load. So the drain does this, BEFORE
 * Fastify's close:
 *
 * 1. Every response still to be written carries `Connection: close`, so the client reads
 *    its answer and then stops using that socket (in-flight requests included).
 * 2. A request arriving during the drain is served (with `Connection: close`) for the
 *    first `serveNewForMs` (it was most likely on the wire when the signal came), then
 *    refused with 503 + `Retry-After` + `Connection: close`. The mark is taken at the raw
 *    'request' event (request line and headers in), so a request that started before the
 *    signal and whose body is still arriving is always served, never refused. A refused
 *    request's body is read to its end before the 503 (unread bytes make a close an RST).
 * 3. The listener stays open until no connection has arrived for `listenQuietMs`, so a
 *    client that reconnects after a `close` answer is accepted and answered, not reset;
 *    clients that honour `Retry-After` stop coming, and the listener then closes with an
 *    empty accept queue. Later connects are refused (ECONNREFUSED: nothing was sent).
 * 4. Sockets with no request in progress are closed once no request has started for
 *    `idleGraceMs` after the listener closed: a client pool whose busy connections
 *    answered `close` sends its next requests on its idle ones (served, then closed).
 * 5. At `timeoutMs` whatever is still open is closed (`closeAllConnections`), logged.
 *
 * What can still fail, inherent to HTTP/1.1 and TCP: a client that starts a request on an
 * idle keep-alive connection at the very moment step 4 closes it, or opens a connection at
 * the very moment step 3 closes the listener (only after a quiet period, or at half of
 * `timeoutMs` for a client that ignores `Retry-After` and reconnects without pause).
 * Clients retry idempotent requests on a new connection (RFC 9112 §9.3.1); POSTs can be
 * retried safely with an `Idempotency-Key`.
 */

export interface DrainOptions {
  /** How long the server must have been quiet (no request started) before the drain closes idle sockets. */
  idleGraceMs?: number;
  /** Requests arriving on open sockets within this long of the signal are served, later ones get 503. */
  serveNewForMs?: number;
  /** The listener closes once no connection has arrived for this long (or at half of `timeoutMs`). */
  listenQuietMs?: number;
  /** After this long, every connection still open is closed. */
  timeoutMs?: number;
  /** Value of `Retry-After` (seconds) on a 503 during the drain. */
  retryAfterSeconds?: number;
  log?: { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };
}

export interface DrainResult {
  /** Requests that started after the drain began and were served. */
  servedDuringDrain: number;
  /** Requests that started after the drain began and were refused with 503. */
  refused: number;
  /** Idle sockets the drain closed after their grace. */
  idleClosed: number;
  /** When the listener closed (ms after the signal). */
  listenerClosedAfterMs: number;
  /** Sockets still open at `timeoutMs`, closed by force. */
  forced: number;
  ms: number;
}

export interface Drain {
  readonly draining: boolean;
  /** Starts the drain (once; later calls return the same promise) and resolves when no socket is left. */
  drain(): Promise<DrainResult>;
}

/** A loop iteration at most this long confirms a quiet observation (see confirmQuiet). */
const TIGHT_MS = 5;

interface SocketState {
  /** Requests of this socket whose response has not closed yet. */
  active: number;
}

/** Installs the bookkeeping on `server` (before it listens) and returns the drain to start on a signal. */
export function installDrain(server: Server, options: DrainOptions = {}): Drain {
  const idleGraceMs = options.idleGraceMs ?? 1000;
  const serveNewForMs = options.serveNewForMs ?? 1000;
  const listenQuietMs = options.listenQuietMs ?? 300;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retryAfter = String(options.retryAfterSeconds ?? 5);

  const sockets = new Map<Socket, SocketState>();
  const inFlight = new Set<ServerResponse>();
  let startedAt = 0;
  let lastRequestAt = 0;
  let lastConnectionAt = 0;
  let connections = 0;
  let requests = 0;
  let listening = true;
  let running: Promise<DrainResult> | undefined;
  const result: DrainResult = {
    servedDuringDrain: 0,
    refused: 0,
    listenerClosedAfterMs: 0,
    idleClosed: 0,
    forced: 0,
    ms: 0,
  };
  let check: () => void = () => {};

  server.on('connection', (socket: Socket) => {
    lastConnectionAt = Date.now();
    connections++;
    sockets.set(socket, { active: 0 });
    socket.once('close', () => {
      sockets.delete(socket);
      check();
    });
  });

  // Our listener runs first and decides; the application's listeners (Fastify's) run unless we refuse.
  const appListeners = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = sockets.get(req.socket);
    if (state) state.active++;
    lastRequestAt = Date.now();
    requests++;
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      if (state) state.active--;
      check();
    });
    if (running) {
      res.setHeader('Connection', 'close');
      if (Date.now() - startedAt > serveNewForMs) {
        result.refused++;
        refuse(req, res, retryAfter);
        return;
      }
      result.servedDuringDrain++;
    }
    for (const listener of appListeners) listener.call(server, req, res);
  });

  const drain = (): Promise<DrainResult> => {
    if (running) return running;
    startedAt = Date.now();
    running = new Promise<DrainResult>((resolve) => {
      // Answers not yet started end their connection; one already streaming keeps it until its end.
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');

      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearInterval(sweep);
        clearTimeout(deadline);
        result.ms = Date.now() - startedAt;
        options.log?.info({ drain: result }, 'drained: every connection closed');
        resolve(result);
      };
      check = () => {
        if (!listening && sockets.size === 0) finish();
      };
      const stopListening = () => {
        if (!listening) return;
        listening = false;
        result.listenerClosedAfterMs = Date.now() - startedAt;
        // Not http.Server#close: that would also close the sockets that look idle, at once.
        NetServer.prototype.close.call(server, () => {});
        // No socket left to wait for: done now. Otherwise the drain finished only at the next
        // idle-grace sweep (1 s more of every stop with no client connected, `npm start`'s included).
        check();
      };
      // The server's view of "quiet" can be stale: while one callback blocks (an embedded
      // database query, a log write to a full pipe), connections queue in the kernel and
      // requests wait unread. So a quiet observation is confirmed one loop iteration later
      // (after a poll phase has accepted and read whatever was waiting), and only when that
      // iteration was short; otherwise the next sweep tries again.
      const confirmQuiet = (action: () => void) => {
        const seen = connections + requests;
        const t0 = Date.now();
        setImmediate(() => {
          if (!finished && connections + requests === seen && Date.now() - t0 <= TIGHT_MS) action();
        });
      };
      const step = () => {
        if (finished) return;
        const now = Date.now();
        if (listening) {
          if (now - startedAt >= timeoutMs / 2) stopListening();
          else if (now - Math.max(lastConnectionAt, startedAt) >= listenQuietMs) confirmQuiet(stopListening);
          return;
        }
        if (now - Math.max(lastRequestAt, startedAt + result.listenerClosedAfterMs) < idleGraceMs) return;
        confirmQuiet(() => {
          for (const [socket, state] of sockets) {
            if (state.active === 0) {
              result.idleClosed++;
              socket.destroy();
            }
          }
          check();
        });
      };
      const sweep = setInterval(() => setImmediate(step), 50);
      const deadline = setTimeout(() => {
        stopListening();
        result.forced = sockets.size;
        options.log?.warn(
          { open: sockets.size, inFlight: inFlight.size },
          'drain timeout: closing the connections still open',
        );
        server.closeAllConnections();
        for (const socket of sockets.keys()) socket.destroy();
        finish();
      }, timeoutMs);
    });
    return running;
  };

  return {
    get draining() {
      return running !== undefined;
    },
    drain,
  };
}

/** 503 once the request body has been read to its end, so the close that follows is a clean FIN. */
function refuse(req: IncomingMessage, res: ServerResponse, retryAfter: string): void {
  const send = () => {
    if (res.headersSent) return;
    const requestId = newId('req');
    const body = JSON.stringify({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'The server is shutting down; retry on a new connection',
        requestId,
      },
    });
    res.writeHead(503, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': requestId,
      'Retry-After': retryAfter,
      Connection: 'close',
    });
    res.end(body);
  };
  if (req.complete) {
    send();
    return;
  }
  req.on('end', send);
  req.on('error', send);
  req.resume();
}
