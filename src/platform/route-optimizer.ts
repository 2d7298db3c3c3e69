/*
 * Route optimization (operations.md §6 winter routes, §9 a crew's day), one pure function shared by both: great-circle (haversine)
 * distances, an open path from the depot (no return; without a depot the path starts
 * at its first stop), nearest neighbour then 2-opt, deterministic, never longer than
 * the order it was given. Stops without coordinates keep their relative order at the end.
 */

export interface Point {
  lat: number;
  lng: number;
}

export interface OptimizeStop {
  id: string;
  point: Point | null;
}

export interface OptimizeResult {
  /** Stop ids in the new order. */
  order: string[];
  /** Length of the given order's path over the stops with coordinates, km (unrounded). */
  beforeKm: number;
  afterKm: number;
}

/** Mean Earth radius (IUGG), km. */
const EARTH_RADIUS_KM = 6371.0088;
const EPSILON = 1e-9;
const rad = (deg: number) => (deg * Math.PI) / 180;

/** Great-circle distance in km. */
export function haversineKm(a: Point, b: Point): number {
  const dLat = rad(b.lat - a.lat);
  const dLng = rad(b.lng - a.lng);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Length of the open path depot → points in order (stops without coordinates skipped). */
export function pathKm(depot: Point | null, points: Array<Point | null>): number {
  let total = 0;
  let previous = depot;
  for (const p of points) {
    if (!p) continue;
    if (previous) total += haversineKm(previous, p);
    previous = p;
  }
  return total;
}

/** Distances between n points (index n is the depot when there is one). */
function matrix(points: Point[], depot: Point | null): Float64Array[] {
  const all = depot ? [...points, depot] : points;
  const m = all.map(() => new Float64Array(all.length));
  for (let i = 0; i < all.length; i++) {
    for (let j = i + 1; j < all.length; j++) {
      const d = haversineKm(all[i] as Point, all[j] as Point);
      (m[i] as Float64Array)[j] = d;
      (m[j] as Float64Array)[i] = d;
    }
  }
  return m;
}

function tourLength(d: Float64Array[], tour: number[], depot: number | null): number {
  let total = 0;
  let previous = depot;
  for (const node of tour) {
    if (previous !== null) total += (d[previous] as Float64Array)[node] as number;
    previous = node;
  }
  return total;
}

function nearestNeighbour(d: Float64Array[], n: number, depot: number | null): number[] {
  const used = new Uint8Array(n);
  const tour: number[] = [];
  let current = depot;
  if (current === null) {
    // No depot: the path starts where the given order starts.
    current = 0;
    used[0] = 1;
    tour.push(0);
  }
  while (tour.length < n) {
    let best = -1;
    let bestD = Number.POSITIVE_INFINITY;
    const row = d[current] as Float64Array;
    for (let j = 0; j < n; j++) {
      if (used[j]) continue;
      const dj = row[j] as number;
      if (dj < bestD - EPSILON) {
        best = j;
        bestD = dj;
      }
    }
    used[best] = 1;
    tour.push(best);
    current = best;
  }
  return tour;
}

/**
 * 2-opt on an open path: reversing tour[i..j] swaps the edges (prev(i), tour[i]) and
 * (tour[j], next(j)); at the free end (and the free start without a depot) the edge is absent.
 * First improvement, scanned in a fixed order, until no move shortens the path.
 */
function twoOpt(d: Float64Array[], start: number[], depot: number | null): number[] {
  const tour = [...start];
  const n = tour.length;
  const dist = (a: number | null, b: number | null) =>
    a === null || b === null ? 0 : ((d[a] as Float64Array)[b] as number);
  let improved = true;
  while (improved) {
    improved = false;
    for (let i = 0; i < n - 1; i++) {
      const before = i === 0 ? depot : (tour[i - 1] as number);
      // Without a depot, reversing a prefix changes only the edge after it.
      for (let j = i + 1; j < n; j++) {
        const a = tour[i] as number;
        const b = tour[j] as number;
        const after = j === n - 1 ? null : (tour[j + 1] as number);
        const delta = dist(before, b) + dist(a, after) - dist(before, a) - dist(b, after);
        if (delta < -EPSILON) {
          for (let lo = i, hi = j; lo < hi; lo++, hi--) {
            const t = tour[lo] as number;
            tour[lo] = tour[hi] as number;
            tour[hi] = t;
          }
          improved = true;
        }
      }
    }
  }
  return tour;
}

export function optimizeRoute(depot: Point | null, stops: OptimizeStop[]): OptimizeResult {
  const located = stops.filter((s): s is OptimizeStop & { point: Point } => s.point !== null);
  const unlocated = stops.filter((s) => s.point === null);
  const beforeKm = pathKm(
    depot,
    stops.map((s) => s.point),
  );
  const n = located.length;
  const d = matrix(
    located.map((s) => s.point),
    depot,
  );
  const depotIndex = depot ? n : null;
  const given = located.map((_, i) => i);
  let best = given;
  let bestKm = tourLength(d, given, depotIndex);
  if (n > 1) {
    for (const candidate of [twoOpt(d, nearestNeighbour(d, n, depotIndex), depotIndex), twoOpt(d, given, depotIndex)]) {
      const km = tourLength(d, candidate, depotIndex);
      if (km < bestKm - EPSILON) {
        best = candidate;
        bestKm = km;
      }
    }
  }
  return {
    order: [...best.map((i) => (located[i] as OptimizeStop).id), ...unlocated.map((s) => s.id)],
    beforeKm,
    afterKm: bestKm,
  };
}

/** Kilometres rounded to 2 decimals, as the API reports them. */
export const roundKm = (km: number) => Math.round(km * 100) / 100;
