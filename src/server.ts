import pino from 'pino';
import { buildApp } from './app.js';
import { ConfigError, configSummary, isDevSecret, loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { migrateOnStart } from './db/migrate.js';
import { startTasks } from './worker/runner.js';
import { workerTasks } from './worker/tasks.js';

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
  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    `API on ${config.baseUrl} (${database.kind === 'pglite' ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})`,
  );

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await app.close(); // stops accepting and waits for in-flight requests
    await worker?.stop();
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? `Configuration error: ${err.message}` : err);
  process.exit(1);
});
