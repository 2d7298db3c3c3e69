import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { Database } from '../db/client.js';

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

export function startTasks(tasks: WorkerTask[], base: Omit<TaskContext, 'wake'>): RunningWorker {
  let stopped = false;
  const timers = new Map<string, NodeJS.Timeout>();
  const running = new Map<string, Promise<void>>();
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
    ...base,
    wake: () => {
      for (const task of tasks) if (!running.has(task.name)) schedule(task, 0);
    },
  };

  const tick = (task: WorkerTask) => {
    if (stopped || running.has(task.name)) return;
    const p = (async () => {
      let handled = 0;
      try {
        handled = await task.run(ctx);
      } catch (err) {
        // A failing batch (database restarting, say) must not kill the worker: log and retry later.
        base.log.warn({ err, task: task.name }, 'worker task failed; will retry');
      } finally {
        running.delete(task.name);
        schedule(task, handled > 0 ? 0 : task.intervalMs);
      }
    })();
    running.set(task.name, p);
  };

  void (async () => {
    for (const task of tasks) {
      if (task.start) {
        try {
          stops.push(await task.start(ctx));
        } catch (err) {
          base.log.warn({ err, task: task.name }, 'worker task setup failed; polling only');
        }
      }
      schedule(task, 0);
    }
  })();

  return {
    stop: async () => {
      stopped = true;
      for (const t of timers.values()) clearTimeout(t);
      await Promise.allSettled([...running.values()]);
      await Promise.allSettled(stops.map((s) => s()));
    },
  };
}
