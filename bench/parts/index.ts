import type { BenchPart } from '../lib.js';
import { billingBench } from './billing.js';

/** Every benchmark part, in the order they run. */
export const benchParts: BenchPart[] = [billingBench];
