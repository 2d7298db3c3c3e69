import { sql } from 'drizzle-orm';
import type { Database } from './client.js';

/** The part of a pino logger this needs (src/db imports nothing else of src/). */
interface OutageLog {
  error(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * Tracks whether the database is reachable, so that an outage is logged as two state
 * changes ("database unreachable", then "database back") instead of one line per
 * failed request or worker tick. Whoever sees a failure that `isDatabaseUnavailable`
 * classifies reports it; the first report logs and starts a probe (`SELECT 1` every
 * `probeEveryMs`) that logs the recovery once.
 */
export interface DatabaseOutage {
  /** Report an infrastructure failure (already classified by `isDatabaseUnavailable`). */
  report(err: unknown): void;
  /** True between the first report and the first successful probe after it. */
  readonly down: boolean;
  /** Calls `fn` each time the database is back after an outage (the worker resumes at once). */
  onBack(fn: () => void): void;
  /** Stops probing (process shutdown). */
  close(): void;
}

export function watchDatabase(
  database: Pick<Database, 'db'>,
  log: OutageLog,
  opts: { probeEveryMs?: number } = {},
): DatabaseOutage {
  const probeEveryMs = opts.probeEveryMs ?? 500;
  let down = false;
  let since = 0;
  let failures = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const listeners: Array<() => void> = [];

  const probe = async () => {
    timer = undefined;
    if (closed) return;
    try {
      await database.db.execute(sql`SELECT 1`);
      down = false;
      log.info({ downForMs: Date.now() - since, failures }, 'database back');
      for (const fn of listeners) fn();
    } catch {
      schedule();
    }
  };
  const schedule = () => {
    if (closed || timer) return;
    timer = setTimeout(() => void probe(), probeEveryMs);
    // The probe never keeps a process alive on its own.
    timer.unref();
  };

  return {
    report(err) {
      failures++;
      if (down || closed) return;
      down = true;
      since = Date.now();
      failures = 1;
      log.error({ err: summary(err) }, 'database unreachable: answering 503 SERVICE_UNAVAILABLE until it is back');
      schedule();
    },
    get down() {
      return down;
    },
    onBack(fn) {
      listeners.push(fn);
    },
    close() {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** The innermost error's code and message: what an operator needs, without SQL or parameters. */
function summary(err: unknown): { code?: string; message: string } {
  let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; e?.cause && depth < 5; depth++) e = e.cause as typeof e;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(e);
  return code ? { code, message } : { message };
}
