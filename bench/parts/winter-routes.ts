import { performance } from 'node:perf_hooks';
import { type OptimizeStop, optimizeRoute, pathKm } from '../../src/platform/route-optimizer.js';
import { type BenchPart, fmt, ratio } from '../lib.js';

/*
 * Route optimization (issue 14): a 200-stop route (random points in a ~20 km square,
 * seeded, so every run optimizes the same instance) must optimize in under 1 s. The
 * baseline, measured in the same run, is one pass over the route measuring its length
 * 200 times (what drawing the route on a map costs), so the ratio means something on
 * any machine; the absolute time is what the issue bounds.
 */
const STOPS = Number(process.env.WINTER_BENCH_STOPS ?? 200);
const RUNS = 5;
const LIMIT_MS = 1000;

function instance(n: number, seed: number): OptimizeStop[] {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    point: { lat: 44.4 + random() * 0.18, lng: -73.3 + random() * 0.25 },
  }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export const winterRoutesBench: BenchPart = {
  name: 'winter-routes',
  async run() {
    const depot = { lat: 44.49, lng: -73.18 };
    const stops = instance(STOPS, 14);
    const optimizeMs: number[] = [];
    const baselineMs: number[] = [];
    let result = optimizeRoute(depot, stops);
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now();
      result = optimizeRoute(depot, stops);
      optimizeMs.push(performance.now() - t);
      t = performance.now();
      for (let k = 0; k < STOPS; k++)
        pathKm(
          depot,
          stops.map((s) => s.point),
        );
      baselineMs.push(performance.now() - t);
    }
    const ms = median(optimizeMs);
    const base = median(baselineMs);
    return [
      '## Winter routes: optimize',
      '',
      `${STOPS} stops, median of ${RUNS} runs. Limit ${LIMIT_MS} ms (issue 14).`,
      '',
      '| Case | ms | × baseline | km before → after | within limit |',
      '|---|---:|---:|---:|---|',
      `| optimize ${STOPS}-stop route (nearest neighbour + 2-opt) | ${fmt(ms, 1)} | ${fmt(ratio(ms, base), 1)} | ${fmt(result.beforeKm, 1)} → ${fmt(result.afterKm, 1)} | ${ms < LIMIT_MS ? 'yes' : 'NO'} |`,
      `| baseline: measure the route ${STOPS} times | ${fmt(base, 2)} | 1.0 | | |`,
    ].join('\n');
  },
};
