import pino from 'pino';
import { startTasks } from './background/runner.js';
import { configSummary, loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { migrateOnStart } from './db/migrate.js';
import { chooseRowsPath } from './db/values.js';
import { workerTasks } from './modules/tasks.js';

/** `npm run worker`: only the background worker, for scale-out next to RUN_WORKER=false API processes. */
async function main() {
  const config = loadConfig();
  const log = pino({ level: config.logLevel });
  log.info({ config: configSummary(config) }, 'configuration');
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
  });
  await migrateOnStart(config, database, log);
  await chooseRowsPath(database);
  const worker = startTasks(workerTasks, { config, database, log });
  log.info({ tasks: workerTasks.map((t) => t.name) }, 'worker started');
  const shutdown = async () => {
    log.info('worker stopping');
    await worker.stop();
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
