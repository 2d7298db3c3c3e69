import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { organizations } from '../../src/db/schema/index.js';
import { recordSmsConsent } from '../../src/modules/customers/customers.refs.js';
import { createCustomer } from '../../src/modules/customers/customers.service.js';
import { queueAutomaticText } from '../../src/modules/messages/messages.service.js';
import { twilioClient, twilioDeps } from '../../src/modules/messages/messages.twilio.js';
import { updateOrgSettings } from '../../src/modules/settings/settings.service.js';
import { newId } from '../../src/platform/ids.js';
import { SecretBox } from '../../src/platform/secrets.js';
import { inTenant } from '../../src/platform/tenancy.js';
import { startTwilioStandIn } from '../../test/messages/twilio-stand-in.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

/*
 * Issue 44's performance goal (operations.md §10): 10,000 visit-reminder texts due at once for
 * 1,000 organizations (10 each), sent by the worker (`npm run worker`, compiled, its own process)
 * through the official SDK to the local Twilio stand-in. At most one text a second per
 * organization, so the ideal is 1,000 texts a second and the last texts handed about 9 s after
 * the first; no organization waits behind another's queue (every organization's first text
 * within 2 s of the first organization's); the worker's memory flat: its live heap (heapUsed
 * right after a full collection, asked over IPC: WORKER_MEMORY_PROBE, the worker started with
 * --expose-gc) the same at the start, middle and end, and RSS not climbing.
 * The baseline, in the same run: the same 10,000 creates through the same SDK to the same
 * stand-in from a bare loop (no database, no pace), what this machine can hand to "Twilio" at all.
 */

const ORGS = 1000;
const PER_ORG = 10;
const TOTAL = ORGS * PER_ORG;
/** Worker processes running at once (issue 44's "done when" runs two). */
const WORKERS = 2;
const BASELINE_CONCURRENCY = 32;
/** Organizations seeded side by side (untimed). */
const SEED_CONCURRENCY = 8;
const AUTH_SECRET = 'bench-auth-secret-bench-auth-secret-0123456789';
const BASE_URL = 'https://bench.example.com';
const PACE_MS = 1000;
/** The run stops waiting after this long and reports how far it got. */
const TIME_LIMIT_MS = 120_000;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Resident memory of a process, in MB (VmRSS of /proc/<pid>/status; 0 where there is no /proc). */
function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** A worker's memory right after a full collection (its WORKER_MEMORY_PROBE answer), in MB; zeros when it did not answer in time. */
async function liveMemory(
  child: ChildProcess,
): Promise<{ heapUsed: number; heapTotal: number; newSpace: number; external: number; rss: number }> {
  const id = Math.random();
  const none = { heapUsed: 0, heapTotal: 0, newSpace: 0, external: 0, rss: 0 };
  if (!child.connected) return none;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      resolve(none);
    }, 5_000);
    const onMessage = (msg: {
      type?: string;
      id?: number;
      usage?: NodeJS.MemoryUsage;
      spaces?: Record<string, number>;
    }) => {
      if (msg?.type !== 'memory' || msg.id !== id || !msg.usage) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      const mb = (n: number) => n / 1024 / 1024;
      resolve({
        heapUsed: mb(msg.usage.heapUsed),
        heapTotal: mb(msg.usage.heapTotal),
        newSpace: mb(msg.spaces?.new_space ?? 0),
        external: mb(msg.usage.external),
        rss: mb(msg.usage.rss),
      });
    };
    child.on('message', onMessage);
    child.send({ type: 'memory', id });
  });
}

const sidOf = (i: number) => `AC${i.toString(16).padStart(32, '0')}`;
const tokenOf = (i: number) => `${i}`.padStart(32, 'a');

export const textsBench: BenchPart = {
  name: 'texts',
  async run() {
    // The worker as `npm run worker` runs it: dist/ (built first when a source changed).
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
    const stand = await startTwilioStandIn();
    const bench = await createBenchDatabase('texts');
    const database = await openDatabase({ databaseUrl: bench.url, poolMax: 10 });
    const workers: ChildProcess[] = [];
    try {
      const env = {
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        DATABASE_URL: bench.url,
        AUTH_SECRET,
        BASE_URL,
        TWILIO_API_BASE: stand.env.TWILIO_API_BASE,
      };
      const config = loadConfig(env);
      const deps = twilioDeps(config);
      const box = new SecretBox(config.authSecret);

      // 1,000 organizations with Twilio configured, a customer who opted in, 10 reminders due now.
      const seedStart = performance.now();
      const actor = { kind: 'user' as const, id: 'usr_bench', role: 'owner' as const };
      let seeded = 0;
      const seedOne = async (i: number) => {
        const orgId = newId('org');
        stand.accounts.set(sidOf(i), tokenOf(i));
        await database.db.insert(organizations).values({ id: orgId, name: `Lawn ${i}`, plan: 'business' });
        await inTenant(database.db, orgId, actor, async (ctx) => {
          await updateOrgSettings(
            ctx,
            {
              twilioAccountSid: sidOf(i),
              twilioAuthToken: tokenOf(i),
              smsFrom: '+15005550006',
              smsEnabled: true,
              reminderChannels: ['sms'],
            },
            box,
          );
          const customer = await createCustomer(ctx, { firstName: `Dana ${i}`, phone: '(415) 555-2671' });
          await recordSmsConsent(ctx, customer.id, { status: 'opted_in', source: 'staff', evidence: 'bench' });
          for (let k = 0; k < PER_ORG; k++) {
            await queueAutomaticText(ctx, deps, {
              customerId: customer.id,
              body: `Lawn ${i}: reminder, mowing tomorrow (visit ${k + 1})`,
              kind: 'visit_reminder',
              dedupeKey: `bench:${k}`,
              quiet: true,
            });
          }
        });
      };
      await Promise.all(
        Array.from({ length: SEED_CONCURRENCY }, async () => {
          while (seeded < ORGS) await seedOne(seeded++);
        }),
      );
      const seedSec = (performance.now() - seedStart) / 1000;

      // Baseline: the same creates through the same SDK, from a bare loop (no database, no pace).
      const clients = Array.from({ length: ORGS }, (_, i) =>
        twilioClient({ accountSid: sidOf(i), authToken: tokenOf(i) }, stand.env.TWILIO_API_BASE),
      );
      let next = 0;
      const baseStart = performance.now();
      await Promise.all(
        Array.from({ length: BASELINE_CONCURRENCY }, async () => {
          while (next < TOTAL) {
            const n = next++;
            await clients[n % ORGS]?.messages.create({
              to: '+14155552671',
              from: '+15005550006',
              body: `baseline ${n}`,
              statusCallback: `${BASE_URL}/api/sms/twilio/org_x/status`,
            });
          }
        }),
      );
      const baseRate = TOTAL / ((performance.now() - baseStart) / 1000);
      stand.accepted.length = 0;
      stand.requests.length = 0;

      // The service: the worker processes started now, every text already due.
      const orgOf = new Map<string, number>();
      for (let i = 0; i < ORGS; i++) orgOf.set(sidOf(i), i);
      const workerStart = Date.now();
      for (let w = 0; w < WORKERS; w++) {
        // BENCH_CPU_PROF=<dir>: each worker writes a V8 CPU profile there when stopped (where time
        // goes); BENCH_HEAP_PROF=<dir>: a sampling heap profile (what the run allocated, and where).
        const profile = [
          ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
          ...(process.env.BENCH_HEAP_PROF ? ['--heap-prof', `--heap-prof-dir=${process.env.BENCH_HEAP_PROF}`] : []),
        ];
        // --expose-gc, WORKER_MEMORY_PROBE and the IPC channel: the worker answers the bench's
        // `memory` message with its live heap (src/worker.ts); nothing else changes in it.
        const child = spawn(process.execPath, [...profile, '--expose-gc', 'dist/worker.js'], {
          env: { ...process.env, ...env, WORKER_MEMORY_PROBE: 'true' },
          stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        });
        workers.push(child);
      }
      // RSS as the system sees it (read first: the collection below may give pages back), then
      // the live heap after a full collection (what the worker still holds) and the heap V8 keeps.
      const memory: Array<{
        at: string;
        rss: number[];
        live: number[];
        heapTotal: number[];
        newSpace: number[];
        external: number[];
        rssAfterGc: number[];
      }> = [];
      const sample = async (at: string) => {
        const rss = workers.map((c) => rssMb(c.pid));
        const live = await Promise.all(workers.map(liveMemory));
        memory.push({
          at,
          rss,
          live: live.map((m) => m.heapUsed),
          heapTotal: live.map((m) => m.heapTotal),
          newSpace: live.map((m) => m.newSpace),
          external: live.map((m) => m.external),
          rssAfterGc: live.map((m) => m.rss),
        });
      };
      // The highest RSS of each worker over the run (read every 250 ms): what the machine must
      // have for it, garbage V8 has not collected yet included (the live heap above says what is held).
      const peak = workers.map(() => 0);
      const peakTimer = setInterval(() => {
        workers.forEach((c, w) => {
          peak[w] = Math.max(peak[w] ?? 0, rssMb(c.pid));
        });
      }, 250);
      // Start: the workers up (their first text handed), before the bulk of the work. A goal
      // missed by far still reports what happened (the figures below say how far it got).
      const deadline = Date.now() + TIME_LIMIT_MS;
      const until = async (n: number) => {
        while (stand.accepted.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        return stand.accepted.length >= n;
      };
      await until(1);
      await sample('start (first text handed)');
      await until(TOTAL / 2);
      await sample(`middle (${fmt(stand.accepted.length)} handed)`);
      const done = await until(TOTAL);
      await sample(
        `end (${fmt(stand.accepted.length)} handed${done ? '' : `, stopped after ${TIME_LIMIT_MS / 1000} s`})`,
      );
      // Nothing more arrives (no text twice): a second more of the workers running.
      await new Promise((r) => setTimeout(r, 1500));
      await sample('1.5 s after the end (idle)');
      clearInterval(peakTimer);

      const accepted = [...stand.accepted];
      const firstAt = accepted[0]?.at ?? workerStart;
      const lastAt = accepted[accepted.length - 1]?.at ?? workerStart;
      const byOrg = new Map<number, number[]>();
      for (const a of accepted) {
        const i = orgOf.get(a.accountSid) ?? -1;
        const list = byOrg.get(i) ?? [];
        list.push(a.at);
        byOrg.set(i, list);
      }
      const firsts = [...byOrg.values()].map((xs) => xs[0] ?? 0).sort((a, b) => a - b);
      const fairness = (firsts[firsts.length - 1] ?? 0) - (firsts[0] ?? 0);
      const gaps: number[] = [];
      for (const xs of byOrg.values()) for (let k = 1; k < xs.length; k++) gaps.push((xs[k] ?? 0) - (xs[k - 1] ?? 0));
      gaps.sort((a, b) => a - b);
      const lasts = [...byOrg.values()].map((xs) => xs[xs.length - 1] ?? 0).sort((a, b) => a - b);
      const spanSec = (lastAt - firstAt) / 1000;
      const svcRate = accepted.length / Math.max(spanSec, 0.001);
      // At the per-organization rate, an organization's 10 texts take 9 s after its first.
      const idealSpanSec = ((PER_ORG - 1) * PACE_MS) / 1000;
      const idealRate = ORGS / (PACE_MS / 1000);
      const reachable = Math.min(idealRate, baseRate);
      const bodies = new Set(accepted.map((a) => `${a.accountSid} ${a.body}`));
      const mb = (xs: number[], digits = 0) => xs.map((x) => `${fmt(x, digits)} MB`).join(' / ');

      return [
        '## Texts: 10,000 reminders due at once for 1,000 organizations (PostgreSQL)',
        '',
        `${fmt(ORGS)} organizations with ${PER_ORG} visit-reminder texts each, all due when ${WORKERS} worker processes (\`npm run worker\`, compiled) start; the Twilio stand-in (local HTTP) accepts each create at once. Seeding (${fmt(TOTAL)} texts queued through the service, one transaction per organization) took ${fmt(seedSec, 1)} s, untimed. Memory: RSS as the system sees it, and each worker's live heap (heapUsed right after a full collection, asked over IPC: \`WORKER_MEMORY_PROBE\`); flat means the live heap the same at the start, middle and end. RSS above the live heap is the heap V8 keeps (its young generation and old-generation garbage not yet given back) and native memory.`,
        '',
        '| Measure | Service | Baseline / ideal | Ratio | Goal |',
        '|---|---|---|---|---|',
        `| Texts handed to the provider | ${fmt(accepted.length)} (${fmt(bodies.size)} distinct) | ${fmt(TOTAL)} | | each once |`,
        `| First to last text handed | ${fmt(spanSec, 1)} s | ${fmt(idealSpanSec, 1)} s at one text a second per organization | | |`,
        `| Rate, texts a second (first to last) | ${fmt(svcRate)} /s | ideal ${fmt(idealRate)} /s (${fmt(ORGS)} organizations × 1/s); bare SDK loop ${fmt(baseRate)} /s (${BASELINE_CONCURRENCY} at once, no database) | ${fmt(ratio(svcRate, reachable), 2)} of the lower | ≥ 0.8 |`,
        `| Gap between an organization's texts, min / p50 / p99 | ${fmt(gaps[0] ?? 0)} / ${fmt(pct(gaps, 50))} / ${fmt(pct(gaps, 99))} ms | ${fmt(PACE_MS)} ms | | min ≥ ~${fmt(PACE_MS)} ms (the pace) |`,
        `| Fairness: last organization's first text after the first organization's | ${fmt(fairness)} ms (p50 ${fmt(pct(firsts, 50) - (firsts[0] ?? 0))} ms) | | | ≤ 2,000 ms |`,
        `| An organization's last text after the first text of all, p50 / max | ${fmt((pct(lasts, 50) - firstAt) / 1000, 1)} / ${fmt(((lasts[lasts.length - 1] ?? 0) - firstAt) / 1000, 1)} s | ${fmt(idealSpanSec, 1)} s | | |`,
        `| Workers start → first text handed | ${fmt(firstAt - workerStart)} ms | | | |`,
        ...memory.map((r) => `| Worker RSS, ${r.at} (each worker) | ${mb(r.rss)} | | | not climbing |`),
        ...memory.map(
          (r) =>
            `| Worker live heap (heapUsed after a full collection), ${r.at} (each worker) | ${mb(r.live, 1)} (heap kept ${mb(r.heapTotal)}, of it young generation ${mb(r.newSpace)}; outside the heap (Buffers) ${mb(r.external)}; RSS then ${mb(r.rssAfterGc)}) | | | flat: start ≈ middle ≈ end |`,
        ),
        `| Worker RSS, highest over the run (each worker, read every 250 ms) | ${mb(peak)} | | | flat |`,
        '',
      ].join('\n');
    } finally {
      for (const child of workers) child.kill('SIGTERM');
      await Promise.all(
        workers.map((c) =>
          c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve(),
        ),
      );
      await stand.close();
      await database.close();
      await bench.drop();
    }
  },
};
