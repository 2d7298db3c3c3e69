import type { BenchPart } from '../lib.js';
import { webhooksBench } from './webhooks.js';

/** Every benchmark part, in the order they run. */
export const benchParts: BenchPart[] = [webhooksBench];
