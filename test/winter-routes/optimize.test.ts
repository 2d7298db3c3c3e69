import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  haversineKm,
  type OptimizeStop,
  optimizeRoute,
  type Point,
  pathKm,
  roundKm,
} from '../../src/platform/route-optimizer.js';

const byId = (stops: OptimizeStop[]) => new Map(stops.map((s) => [s.id, s.point]));
const lengthOf = (depot: Point | null, stops: OptimizeStop[], order: string[]) => {
  const points = byId(stops);
  return pathKm(
    depot,
    order.map((id) => points.get(id) ?? null),
  );
};

/** A deterministic shuffle (mulberry32), so the test instances are the same on every run. */
function shuffled<T>(items: T[], seed: number): T[] {
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

describe('haversine', () => {
  it('measures known great-circle distances', () => {
    // One degree of latitude ≈ 111.2 km; Paris → London ≈ 343.5 km.
    expect(haversineKm({ lat: 0, lng: 0 }, { lat: 1, lng: 0 })).toBeCloseTo(111.195, 2);
    expect(haversineKm({ lat: 48.8566, lng: 2.3522 }, { lat: 51.5074, lng: -0.1278 })).toBeCloseTo(343.5, 0);
    expect(haversineKm({ lat: 10, lng: 20 }, { lat: 10, lng: 20 })).toBe(0);
  });
  it('rounds km to two decimals', () => {
    expect(roundKm(1.234567)).toBe(1.23);
    expect(roundKm(1.235001)).toBe(1.24);
  });
});

describe('optimizeRoute on known instances', () => {
  it('drives a shuffled line of stops on the equator straight out from the depot', () => {
    const stops = Array.from({ length: 12 }, (_, i) => ({ id: `s${i}`, point: { lat: 0, lng: -75 + i * 0.01 } }));
    const depot = { lat: 0, lng: -75.01 };
    const result = optimizeRoute(depot, shuffled(stops, 7));
    expect(result.order).toEqual(stops.map((s) => s.id));
    expect(result.afterKm).toBeCloseTo(haversineKm(depot, { lat: 0, lng: -75 + 11 * 0.01 }), 6);
    expect(result.beforeKm).toBeGreaterThan(result.afterKm);
  });

  it('finds the serpentine on a 5 × 5 grid (the optimum: 25 unit steps from a depot one step off the corner)', () => {
    // Near the equator a 0.01° step is ~1.11 km both ways; rows run east-west.
    const step = 0.01;
    const grid: OptimizeStop[] = [];
    for (let r = 0; r < 5; r++) {
      for (let c = 0; c < 5; c++) grid.push({ id: `r${r}c${c}`, point: { lat: r * step, lng: c * step } });
    }
    const depot = { lat: 0, lng: -step };
    const result = optimizeRoute(depot, shuffled(grid, 42));
    const unit = Math.max(
      haversineKm({ lat: 0, lng: 0 }, { lat: step, lng: 0 }),
      haversineKm({ lat: 0, lng: 0 }, { lat: 0, lng: step }),
    );
    // Any path over 25 grid points from the depot has 25 edges of at least one (smallest) step; the
    // serpentine uses exactly 25 steps, so it is optimal, and 2-opt must reach it.
    expect(result.afterKm).toBeLessThanOrEqual(25 * unit + 1e-9);
    expect(new Set(result.order).size).toBe(25);
    expect(result.order[0]).toBe('r0c0');
  });

  it('without a depot measures from the first stop', () => {
    const stops = [
      { id: 'a', point: { lat: 0, lng: 0 } },
      { id: 'c', point: { lat: 0, lng: 0.02 } },
      { id: 'b', point: { lat: 0, lng: 0.01 } },
    ];
    const result = optimizeRoute(null, stops);
    expect(result.afterKm).toBeCloseTo(haversineKm({ lat: 0, lng: 0 }, { lat: 0, lng: 0.02 }), 6);
    expect(result.beforeKm).toBeCloseTo(lengthOf(null, stops, ['a', 'c', 'b']), 9);
    expect([
      ['a', 'b', 'c'],
      ['c', 'b', 'a'],
    ]).toContainEqual(result.order);
  });

  it('keeps stops without coordinates at the end, in their order, and leaves an optimal order alone', () => {
    const stops = [
      { id: 'x', point: null },
      { id: 'a', point: { lat: 0, lng: 0.01 } },
      { id: 'y', point: null },
      { id: 'b', point: { lat: 0, lng: 0.02 } },
    ];
    const result = optimizeRoute({ lat: 0, lng: 0 }, stops);
    expect(result.order).toEqual(['a', 'b', 'x', 'y']);
    expect(result.afterKm).toBe(result.beforeKm);
  });

  it('handles no stops and one stop', () => {
    expect(optimizeRoute(null, [])).toEqual({ order: [], beforeKm: 0, afterKm: 0 });
    expect(optimizeRoute({ lat: 0, lng: 0 }, [{ id: 'a', point: { lat: 0, lng: 1 } }]).order).toEqual(['a']);
  });
});

const pointArb = fc.record({
  lat: fc.double({ min: 40, max: 41, noNaN: true }),
  lng: fc.double({ min: -75, max: -74, noNaN: true }),
});

describe('optimizeRoute properties', () => {
  it('returns a permutation, never longer than the given order, deterministically', () => {
    fc.assert(
      fc.property(
        fc.option(pointArb, { nil: null }),
        fc.array(fc.option(pointArb, { nil: null, freq: 6 }), { maxLength: 40 }),
        (depot, points) => {
          const stops = points.map((point, i) => ({ id: `s${i}`, point }));
          const result = optimizeRoute(depot, stops);
          expect([...result.order].sort()).toEqual(stops.map((s) => s.id).sort());
          expect(result.afterKm).toBeLessThanOrEqual(result.beforeKm + 1e-9);
          expect(lengthOf(depot, stops, result.order)).toBeCloseTo(result.afterKm, 6);
          expect(result.beforeKm).toBeCloseTo(
            lengthOf(
              depot,
              stops,
              stops.map((s) => s.id),
            ),
            6,
          );
          const tail = stops.filter((s) => s.point === null).map((s) => s.id);
          expect(result.order.slice(result.order.length - tail.length)).toEqual(tail);
          expect(optimizeRoute(depot, stops)).toEqual(result);
        },
      ),
      { numRuns: 200, seed: 14 },
    );
  });
});
