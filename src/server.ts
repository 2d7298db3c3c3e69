import pino from 'pino';
import { buildApp } from './app.js';
import { startTasks } from './background/runner.js';
import { ConfigError, configSummary, isDevSecret, loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { migrateOnStart } from './db/migrate.js';
import { workerTasks } from './modules/tasks.js';
import { installDrain } from './platform/drain.js';

/** `npm start`: parse config → open the database → migrate → build the app → listen (+ worker). */
async function main() {
  const config = loadConfig();
  // Before the app exists (it is built on a migrated database), start-up lines go to a plain pino logger.
  const startLog = pino({ level: config.logLevel });
  startLog.info({ config: configSummary(config) }, 'configuration');
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrateOnStart(config, database, startLog);
  const app = await buildApp(config, database);
  if (isDevSecret(config)) app.log.warn('AUTH_SECRET is not set: using a development secret (never in production)');
  const worker = config.runWorker ? startTasks(workerTasks, { config, database, log: app.log }) : undefined;
  app.log.info(
    worker
      ? { tasks: workerTasks.map((t) => t.name) }
      : { hint: 'run `npm run worker` separately, or webhooks and reminders stay queued' },
    worker ? 'worker started in this process' : 'worker not started (RUN_WORKER=false)',
  );
  // Before listening: the drain counts every connection from the first one.
  const drainer = installDrain(app.server, { log: app.log });
  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    `API on ${config.baseUrl} (${database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})`,
  );

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => {
      app.log.error('shutdown did not finish in 20 s: exiting');
      process.exit(1);
    }, 20_000);
    force.unref();
    // Drain first (see src/platform/drain.ts): Fastify's close would reset sockets that look idle.
    await drainer.drain();
    await worker?.stop();
    await app.close();
    await database.close();
    app.log.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? `Configuration error: ${err.message}` : err);
  process.exit(1);
});
