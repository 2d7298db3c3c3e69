import type { BenchPart } from '../lib.js';

/** Every benchmark part, in the order they run. */
export const benchParts: BenchPart[] = [];
