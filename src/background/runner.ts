import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';
import { type DatabaseOutage, watchDatabase } from '../db/outage.js';
import { isDatabaseUnavailable } from '../db/pg-errors.js';

export interface TaskContext {
  config: Config;
  database: Database;
  log: FastifyBaseLogger;
  /** Ask the runner to run every task again soon (e.g. after new work was found). */
  wake(): void;
}

/**
 * A unit of background work. `run` does one bounded batch and returns how many
 * items it handled; the runner calls it again at once while it keeps finding work,
 * and otherwise every `intervalMs`. Tasks must be safe to run in several worker
 * processes at once (claims with FOR UPDATE SKIP LOCKED, or idempotent updates).
 */
export interface WorkerTask {
  name: string;
  intervalMs: number;
  run(ctx: TaskContext): Promise<number>;
  /** Optional long-lived setup (LISTEN, timers); returns a stop function. */
  start?(ctx: TaskContext): Promise<() => Promise<void>>;
}

export interface RunningWorker {
  stop(): Promise<void>;
}

/** How long the first round waits for one task's first run before starting the next task's. */
const FIRST_ROUND_WAIT_MS = 200;

/** Backoff after consecutive failures of a task: 0.5 s doubling up to 10 s (never sooner than its interval). */
const BACKOFF_START_MS = 500;
const BACKOFF_MAX_MS = 10_000;

export function retryDelay(intervalMs: number, failures: number): number {
  return Math.max(intervalMs, Math.min(BACKOFF_START_MS * 2 ** (failures - 1), BACKOFF_MAX_MS));
}

/**
 * Runs the tasks until `stop`. `outage` is the process's database watch (the API's, when
 * the worker runs inside `npm start`), so an outage is logged once per process.
 */
export function startTasks(
  tasks: WorkerTask[],
  base: Omit<TaskContext, 'wake'> & { outage?: DatabaseOutage },
): RunningWorker {
  let stopped = false;
  const { outage: given, ...taskBase } = base;
  const ownOutage = given ? undefined : watchDatabase(base.database, base.log);
  const outage = (given ?? ownOutage) as DatabaseOutage;
  const failures = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Map<string, Promise<void>>();
  /**
   * Tasks woken while they ran: they run again as soon as that run ends. A wake that came
   * mid-run (a NOTIFY after the webhook fan-out had read the outbox) was dropped, and its work
   * waited for the task's interval (up to 250 ms of a webhook's latency).
   */
  const wokenWhileRunning = new Set<string>();
  const stops: Array<() => Promise<void>> = [];

  const schedule = (task: WorkerTask, delay: number) => {
    if (stopped) return;
    clearTimeout(timers.get(task.name));
    timers.set(
      task.name,
      setTimeout(() => tick(task), delay),
    );
  };

  const ctx: TaskContext = {
    ...taskBase,
    wake: () => {
      for (const task of tasks) {
        if (running.has(task.name)) wokenWhileRunning.add(task.name);
        else schedule(task, 0);
      }
    },
  };
  // Back from an outage: no task waits out its backoff.
  outage.onBack(() => {
    failures.clear();
    ctx.wake();
  });

  const tick = (task: WorkerTask) => {
    if (stopped || running.has(task.name)) return;
    wokenWhileRunning.delete(task.name);
    const p = (async () => {
      let handled = 0;
      let delay = task.intervalMs;
      try {
        handled = await task.run(ctx);
        failures.delete(task.name);
        if (handled > 0 || wokenWhileRunning.has(task.name)) delay = 0;
      } catch (err) {
        // A failing batch must not kill the worker: retry with backoff. Nothing is lost: work
        // stays in its table until a run commits it. An unreachable database is logged once
        // per outage (src/db/outage.ts), anything else on every failure.
        const n = (failures.get(task.name) ?? 0) + 1;
        failures.set(task.name, n);
        delay = retryDelay(task.intervalMs, n);
        if (isDatabaseUnavailable(err)) outage.report(err);
        else base.log.warn({ err, task: task.name, retryInMs: delay }, 'worker task failed; will retry');
      } finally {
        running.delete(task.name);
        schedule(task, delay);
      }
    })();
    running.set(task.name, p);
  };

  // The first round runs one task after another, not every task at once: on the embedded
  // database (one connection, one statement at a time) two dozen first batches queued together
  // held the first requests after start-up, /readyz's check included, behind all of them (seconds
  // on a loaded machine); now a request waits at most for the one batch running. A first run that
  // takes longer than FIRST_ROUND_WAIT_MS (a delivery waiting on a slow receiver) does not hold the
  // next task's. After its first run each task keeps its own schedule as before.
  void (async () => {
    for (const task of tasks) {
      if (stopped) return;
      if (task.start) {
        try {
          stops.push(await task.start(ctx));
        } catch (err) {
          base.log.warn({ err, task: task.name }, 'worker task setup failed; polling only');
        }
      }
      tick(task);
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([
        running.get(task.name),
        new Promise((resolve) => {
          waited = setTimeout(resolve, FIRST_ROUND_WAIT_MS);
        }),
      ]);
      clearTimeout(waited);
    }
  })();

  return {
    stop: async () => {
      stopped = true;
      ownOutage?.close();
      for (const t of timers.values()) clearTimeout(t);
      await Promise.allSettled([...running.values()]);
      await Promise.allSettled(stops.map((s) => s()));
    },
  };
}
