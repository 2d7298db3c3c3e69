import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { ConfigError, configSummary, isDevSecret, loadConfig } from './config.js';
import { installDrain } from './platform/drain.js';
import { startingServer } from './platform/starting.js';

/**
 * `npm start`: parse config → listen (answering 503 while starting, src/platform/starting.ts)
 * → load the application → open the database → migrate → build the app → hand the server
 * over to it (+ worker). Only configuration, the logger and the start-up server are imported
 * up front: the port is open before the application's modules are even loaded.
 */
async function main() {
  const config = loadConfig();
  const startLog = pino({ level: config.logLevel });
  startLog.info({ config: configSummary(config) }, 'configuration');

  const starting = startingServer();
  // Before listening: the drain counts every connection from the first one.
  const drainer = installDrain(starting.server, { log: startLog });
  await new Promise<void>((resolve, reject) => {
    starting.server.once('error', reject);
    starting.server.listen(config.port, config.host, () => {
      starting.server.off('error', reject);
      resolve();
    });
  });
  const { port } = starting.server.address() as AddressInfo;
  // "Server listening at" as Fastify words it (scripts and tests read the address from it).
  startLog.info(
    `Server listening at http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}: starting (/healthz answers, /readyz says what it waits for)`,
  );

  let closing = false;
  let stopWorker: (() => Promise<void>) | undefined;
  let closeApp: (() => Promise<void>) | undefined;
  let closeDatabase: (() => Promise<void>) | undefined;

  const boot = (async () => {
    starting.step('loading the application and opening the database');
    // The database opens while the application's modules load, not after: PGlite compiles its
    // WebAssembly engine off the main thread and both read files, so the two overlap (a
    // PostgreSQL pool connects meanwhile). `closeDatabase` is set as soon as it is open, so a
    // stop during the rest of start-up closes it.
    const opening = import('./db/client.js')
      .then(({ openDatabase }) =>
        openDatabase({
          databaseUrl: config.databaseUrl,
          dataDir: config.dataDir,
          connectTimeoutMs: config.databaseConnectTimeoutMs,
        }),
      )
      .then((database) => {
        closeDatabase = () => database.close();
        return database;
      });
    const [{ buildApp }, { startTasks }, { workerTasks }, { migrateOnStart }, database] = await Promise.all([
      import('./app.js'),
      import('./background/runner.js'),
      import('./modules/tasks.js'),
      import('./db/migrate.js'),
      opening,
    ]);
    if (closing) return;
    starting.step('applying database migrations');
    await migrateOnStart(config, database, startLog);
    if (closing) return;
    starting.step('building the routes');
    // Fastify hands its request handler over at construction; requests reach it once the app is ready.
    let handler: Parameters<typeof starting.handOver>[0] | undefined;
    const app = await buildApp(config, database, {
      serverFactory: (h) => {
        handler = h;
        return starting.server;
      },
    });
    closeApp = () => app.close();
    if (handler) starting.handOver(handler);
    if (isDevSecret(config)) app.log.warn('AUTH_SECRET is not set: using a development secret (never in production)');
    // The worker's first round starts a moment after the API is ready, not with it: on the
    // embedded database (one statement at a time) its first batches held /readyz's check and the
    // first requests behind them (about 0.4 s of every start on a loaded machine), and nothing it
    // does is due to the second.
    let worker: ReturnType<typeof startTasks> | undefined;
    const workerStart = config.runWorker
      ? setTimeout(() => {
          if (!closing) worker = startTasks(workerTasks, { config, database, log: app.log, outage: app.deps.outage });
        }, WORKER_START_DELAY_MS)
      : undefined;
    stopWorker = async () => {
      clearTimeout(workerStart);
      await worker?.stop();
    };
    app.log.info(
      config.runWorker
        ? { tasks: workerTasks.map((t) => t.name), startsInMs: WORKER_START_DELAY_MS }
        : { hint: 'run `npm run worker` separately, or webhooks and reminders stay queued' },
      config.runWorker ? 'worker started in this process' : 'worker not started (RUN_WORKER=false)',
    );
    app.log.info(
      `API ready on ${config.baseUrl} (${database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'}) in ${Math.round(process.uptime() * 1000)} ms. Console: ${config.baseUrl}/app. Stop: Ctrl-C, or kill -TERM ${process.pid}`,
    );
  })();

  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    startLog.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => {
      startLog.error('shutdown did not finish in 20 s: exiting');
      process.exit(1);
    }, 20_000);
    force.unref();
    // A step of start-up in progress (a migration's transaction, say) finishes first.
    await boot.catch(() => {});
    // Drain first (see src/platform/drain.ts): Fastify's close would reset sockets that look idle.
    await drainer.drain();
    await stopWorker?.();
    await closeApp?.();
    await closeDatabase?.();
    startLog.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));

  await boot;
}

/** How long after the API is ready the in-process worker starts its first round. */
const WORKER_START_DELAY_MS = 1_000;

main().catch((err) => {
  // Errors an operator acts on (a bad setting, a data directory in use) are a sentence, not a stack.
  console.error(
    err instanceof ConfigError
      ? `Configuration error: ${err.message}`
      : err instanceof Error && err.name === 'DataDirLockedError'
        ? err.message
        : err,
  );
  process.exit(1);
});
