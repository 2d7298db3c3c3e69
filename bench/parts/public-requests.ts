import type { Challenge } from 'altcha-lib';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import autocannon from 'autocannon';
import { openDatabase } from '../../src/db/client.js';
import { drive, type Run, signedInOwner, startService } from '../http.js';
import { type BenchPart, createBenchDatabase, fmt, ratio } from '../lib.js';

/*
 * The public booking form under a flood from one address (issue 45, operations.md §12): what a
 * refused request (429) costs beside an accepted one, and what the flood does to another
 * tenant's API. The service runs behind a trusted proxy (TRUST_PROXY=true) so each accepted
 * request can come from its own address (5 a minute per address), as a form on many visitors'
 * screens would.
 */

const SLUG = 'bench-lawn';
/** Accepted requests timed one at a time (each a challenge solved beforehand, untimed). */
const ACCEPTED = 40;
const FLOOD_S = 6;
const FLOOD_CONNECTIONS = 20;
const OTHER_S = 6;
const OTHER_CONNECTIONS = 5;
const CUSTOMERS = 500;

/*
 * The flood runs on a thread of its own (autocannon's `workers`: its own event loop), as an
 * attacker runs on a machine of their own: autocannon on the service's event loop would charge the
 * service for writing 20 connections' requests and reading their answers, which is the attacker's
 * work, and slow the other tenant's page by the client's cost rather than the service's. The
 * measured client stays on the service's thread, the same in the quiet run and beside the flood.
 */
const FLOOD_WORKERS = 1;
/** "10,000 requests a minute from one address" (issue 45, Bad input and faults). */
const FLOOD_PER_MINUTE = 10_000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function solvedField(base: string, address: string): Promise<string> {
  const res = await fetch(`${base}/api/public/${SLUG}/challenge`, { headers: { 'x-forwarded-for': address } });
  if (res.status !== 200) throw new Error(`challenge: ${res.status}`);
  const challenge = (await res.json()) as Challenge;
  const solution = await solveChallenge({ challenge, deriveKey });
  if (!solution) throw new Error('challenge not solved');
  return Buffer.from(JSON.stringify({ challenge, solution })).toString('base64');
}

const requestBody = (altcha: string, n: number) =>
  JSON.stringify({
    firstName: `Visitor ${n}`,
    email: `visitor${n}@example.com`,
    address: { street: `${n} Elm St`, city: 'Springfield' },
    description: 'Weekly mowing, Fridays if possible',
    altcha,
    website: '',
  });

export const publicRequestsBench: BenchPart = {
  name: 'public-requests',
  async run() {
    const bench = await createBenchDatabase('requests');
    const database = await openDatabase({ databaseUrl: bench.url });
    try {
      // BENCH_REDIS_URL: the limits shared through Redis, as with several API processes.
      const redis = process.env.BENCH_REDIS_URL;
      const { app, base } = await startService(database, {
        TRUST_PROXY: 'true',
        ...(redis ? { REDIS_URL: redis } : {}),
      });
      const owner = await signedInOwner(app, 'Bench Lawn');
      const other = await signedInOwner(app, 'Another Business');
      const as = (cookie: string) => ({ cookie, 'content-type': 'application/json' });
      const set = await fetch(`${base}/api/settings`, {
        method: 'PATCH',
        headers: as(owner.cookie),
        body: JSON.stringify({ bookingSlug: SLUG }),
      });
      if (set.status !== 200) throw new Error(`slug: ${set.status} ${await set.text()}`);
      for (let i = 0; i < CUSTOMERS; i += 1) {
        await fetch(`${base}/api/customers`, {
          method: 'POST',
          headers: as(other.cookie),
          body: JSON.stringify({ firstName: `Customer ${i}`, email: `c${i}@example.com` }),
        });
      }

      // Accepted requests: each from its own address, its challenge solved before the clock starts.
      const accepted: number[] = [];
      for (let i = 0; i < ACCEPTED; i += 1) {
        const address = `198.51.100.${i + 1}`;
        const altcha = await solvedField(base, address);
        const t = performance.now();
        const res = await fetch(`${base}/api/public/${SLUG}/requests`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
          body: requestBody(altcha, i),
        });
        accepted.push(performance.now() - t);
        if (res.status !== 201) throw new Error(`accepted request answered ${res.status}: ${await res.text()}`);
      }

      // A refused request's cost, timed like the accepted ones: one at a time from an address
      // past its limit (the first 5 of the minute are spent first).
      const flooder = '203.0.113.9';
      const junk = requestBody('bm90IGEgc29sdXRpb24=', 999);
      const post = () =>
        fetch(`${base}/api/public/${SLUG}/requests`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': flooder },
          body: junk,
        });
      for (let i = 0; i < 5; i += 1) await (await post()).text();
      const refusedOne: number[] = [];
      for (let i = 0; i < ACCEPTED * 5; i += 1) {
        const t = performance.now();
        const res = await post();
        await res.text();
        refusedOne.push(performance.now() - t);
        if (res.status !== 429) throw new Error(`refused request answered ${res.status}`);
      }

      // Another tenant's customers page alone, then beside a flood from that address.
      const page = `${base}/api/customers?limit=50`;
      // Warmed first (compiled code, the page's rows in PostgreSQL's cache), so the quiet run is not its cold start.
      await drive(page, { cookie: other.cookie }, 2, OTHER_CONNECTIONS);
      const quiet = await drive(page, { cookie: other.cookie }, OTHER_S, OTHER_CONNECTIONS);
      const floodAt = (overallRate?: number) =>
        autocannon({
          url: `${base}/api/public/${SLUG}/requests`,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': flooder },
          body: junk,
          connections: FLOOD_CONNECTIONS,
          // Started a second before the page is measured and ending a second after it, so the measured
          // window is all flood, and not the flood thread's start (loading autocannon in a new isolate).
          duration: FLOOD_S + 2,
          workers: FLOOD_WORKERS,
          ...(overallRate ? { overallRate } : {}),
        });
      const beside = async (overallRate?: number) => {
        const flood = floodAt(overallRate);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const run: Run = await drive(page, { cookie: other.cookie }, OTHER_S, OTHER_CONNECTIONS);
        return { run, flood: await flood };
      };
      // The flood (10,000 requests a minute from one address), sent at that rate whatever the
      // answers: then a cheaper refusal is less of the service's time. Then, for information, as fast as
      // 20 connections can go: a closed loop sends more the faster it is refused, so it takes a share
      // of the service set by the connection count more than by the cost of a 429.
      const rated = await beside(FLOOD_PER_MINUTE / 60);
      const flat = await beside();
      const busy = rated.run;
      const flooded = rated.flood;
      const refused = flooded.statusCodeStats?.['429']?.count ?? 0;
      await app.close();

      const acceptedMs = median(accepted);
      const refusedMs = median(refusedOne);
      return [
        `## Public booking requests under a flood (PostgreSQL${redis ? ', limits in Redis' : ''})`,
        '',
        `One organization's form (\`POST /api/public/{slug}/requests\`, ALTCHA solved beforehand, untimed) and another organization's customers page (${CUSTOMERS} customers, 50 a page, ${OTHER_CONNECTIONS} connections), with a flood of ${fmt(FLOOD_PER_MINUTE)} requests a minute (the issue's figure) on ${FLOOD_CONNECTIONS} connections from one address for ${FLOOD_S} s (on a thread of its own, as an attacker's own machine; the page warmed before its quiet run).`,
        '',
        '| Measure | Figure | Ratio | Goal |',
        '|---|---|---|---|',
        `| Accepted request (validated, stored, event, owner mail queued), median of ${ACCEPTED} | ${fmt(acceptedMs, 1)} ms | | |`,
        `| Refused request (429 from the address limit), one at a time, median of ${ACCEPTED * 5} | ${fmt(refusedMs, 1)} ms | ${fmt(ratio(refusedMs, acceptedMs), 2)} | ≤ 0.2 |`,
        `| The flood (${fmt(FLOOD_PER_MINUTE)} a minute): 429s / requests, rate, p50 | ${fmt(refused)} / ${fmt(flooded.requests.total)}, ${fmt(flooded.requests.average)}/s, ${fmt(flooded.latency.p50, 1)} ms | | all refused |`,
        `| Another tenant's page p99 alone / beside the flood (of ${fmt(quiet.samples)} / ${fmt(busy.samples)} responses) | ${fmt(quiet.p99)} / ${fmt(busy.p99)} ms | ${fmt(ratio(busy.p99, Math.max(quiet.p99, 1)), 2)} | ≤ 1.3 |`,
        `| Another tenant's page p50 alone / beside the flood | ${fmt(quiet.p50)} / ${fmt(busy.p50)} ms | | |`,
        `| Information: a flood as fast as ${FLOOD_CONNECTIONS} connections go: 429s / requests, rate | ${fmt(flat.flood.statusCodeStats?.['429']?.count ?? 0)} / ${fmt(flat.flood.requests.total)}, ${fmt(flat.flood.requests.average)}/s | | |`,
        `| Information: another tenant's page p99 / p50 beside that flood | ${fmt(flat.run.p99)} / ${fmt(flat.run.p50)} ms | ${fmt(ratio(flat.run.p99, Math.max(quiet.p99, 1)), 2)} | |`,
        '',
      ].join('\n');
    } finally {
      await database.close();
      await bench.drop();
    }
  },
};
