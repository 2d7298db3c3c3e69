import type { BenchPart } from '../lib.js';
import { customersBench } from './customers.js';

/** Every benchmark part, in the order they run. */
export const benchParts: BenchPart[] = [customersBench];
