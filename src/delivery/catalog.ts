/**
 * The event catalogue lives in src/platform/events/catalog.ts (every module emits through it).
 * This re-export only keeps src/delivery/payloads.ts building until issue 26 relocates the
 * payload schemas; delete it then.
 */
export { type CatalogEvent, EVENT_CATALOG } from '../platform/events/catalog.js';
