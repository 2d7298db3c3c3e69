import { describe, expect, it } from 'vitest';
import { startTasks, type TaskContext, type WorkerTask } from '../../src/background/runner.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import { TEST_ENV } from '../harness.js';

/**
 * A wake that comes while the task runs (the webhook worker's NOTIFY arriving after its
 * fan-out read the outbox) makes the task run again when that run ends, not after its
 * interval: the interval here is an hour, so only the wake can bring the second run.
 */
describe('worker runner: a wake during a run', () => {
  it('runs the task again right after the run it came during', async () => {
    let release: () => void = () => {};
    const during = new Promise<void>((r) => {
      release = r;
    });
    let secondRun: () => void = () => {};
    const second = new Promise<void>((r) => {
      secondRun = r;
    });
    let runs = 0;
    let ctxSeen: TaskContext | undefined;
    let started: () => void = () => {};
    const firstStarted = new Promise<void>((r) => {
      started = r;
    });
    const task: WorkerTask = {
      name: 'sleepy',
      intervalMs: 3_600_000,
      async run(ctx) {
        runs++;
        ctxSeen = ctx;
        if (runs === 1) {
          started();
          await during;
        } else secondRun();
        return 0; // found nothing: without the wake it would sleep for its interval
      },
    };
    const outage = { report: () => {}, down: false, onBack: () => {}, close: () => {} };
    const worker = startTasks([task], {
      config: loadConfig(TEST_ENV),
      database: {} as Database,
      log: { warn: () => {} } as never,
      outage,
    });
    try {
      await firstStarted;
      ctxSeen?.wake();
      release();
      await second;
      expect(runs).toBe(2);
    } finally {
      await worker.stop();
    }
  });
});
