import { getHeapSpaceStatistics } from 'node:v8';
import pino from 'pino';
import { startTasks } from './background/runner.js';
import { type Config, ConfigError, configSummary, loadConfig } from './config.js';
import { openDatabase } from './db/client.js';
import { migrateOnStart } from './db/migrate.js';
import { chooseRowsPath } from './db/values.js';
import { workerTasks } from './modules/tasks.js';

/**
 * WORKER_MEMORY_PROBE (the texts bench): answers the parent's `{ type: 'memory' }` message with
 * process.memoryUsage() right after a full collection, so heapUsed is the live heap, not the
 * garbage V8 has not collected yet. Over the IPC channel of the process that started this one:
 * nothing listens on the network for it.
 */
function answerMemoryProbes(config: Config): void {
  if (!config.workerMemoryProbe) return;
  const gc = globalThis.gc;
  const send = process.send?.bind(process);
  if (typeof gc !== 'function' || !send) {
    throw new ConfigError('WORKER_MEMORY_PROBE needs node --expose-gc and a parent with an IPC channel');
  }
  process.on('message', (msg: { type?: unknown; id?: unknown }) => {
    if (msg?.type !== 'memory') return;
    gc();
    // Which part of the heap V8 keeps is young generation (new space grows under a high
    // allocation rate and shrinks when idle) and which is old generation.
    const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size]));
    send({ type: 'memory', id: msg.id, usage: process.memoryUsage(), spaces });
  });
  // The channel alone does not keep the worker running (it stops on SIGTERM as ever).
  process.channel?.unref();
}

/** `npm run worker`: only the background worker, for scale-out next to RUN_WORKER=false API processes. */
async function main() {
  const config = loadConfig();
  const log = pino({ level: config.logLevel });
  log.info({ config: configSummary(config) }, 'configuration');
  answerMemoryProbes(config);
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
