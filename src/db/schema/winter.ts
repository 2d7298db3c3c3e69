import { sql } from 'drizzle-orm';
import { bigint, boolean, doublePrecision, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { invoices } from './billing.js';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { crews } from './crew-tracking.js';
import { customers, properties } from './customers.js';

/** A snow route: ordered stops on the organization's properties (operations.md §6). */
export const winterRoutes = pgTable(
  'winter_routes',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    crewId: text('crew_id').references(() => crews.id, { onDelete: 'set null' }),
    depotLat: doublePrecision('depot_lat'),
    depotLng: doublePrecision('depot_lng'),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('winter_routes_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('winter_routes_org_active_created_idx').on(t.organizationId, t.active, t.createdAt, t.id),
  ],
);

/** A stop of a route; a property appears at most once in a route. A deleted property leaves its routes. */
export const winterRouteStops = pgTable(
  'winter_route_stops',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    routeId: text('route_id')
      .notNull()
      .references(() => winterRoutes.id, { onDelete: 'cascade' }),
    propertyId: text('property_id')
      .notNull()
      .references(() => properties.id, { onDelete: 'cascade' }),
    /** From 1, in driving order. */
    sequence: integer('sequence').notNull(),
    /** plow | salt | shovel | deice */
    services: text('services').array().notNull(),
    triggerInches: doublePrecision('trigger_inches').notNull().default(2),
    /** per_push | per_event | seasonal */
    billingMode: text('billing_mode').notNull(),
    priceCents: bigint('price_cents', { mode: 'number' }).notNull(),
    notes: text('notes'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('winter_route_stops_org_route_seq_idx').on(t.organizationId, t.routeId, t.sequence, t.id),
    uniqueIndex('winter_route_stops_route_property_uq').on(t.routeId, t.propertyId),
  ],
);

export const storms = pgTable(
  'storms',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    startedAt: ts('started_at').notNull(),
    endedAt: ts('ended_at'),
    snowfallInches: doublePrecision('snowfall_inches').notNull(),
    ice: boolean('ice').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('storms_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    /** The dashboard counts storms by when they started. */
    index('storms_org_started_idx').on(t.organizationId, t.startedAt),
  ],
);

/** One run per route per storm: the unique index makes a concurrent second dispatch fail. */
export const winterRuns = pgTable(
  'winter_runs',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    stormId: text('storm_id')
      .notNull()
      .references(() => storms.id, { onDelete: 'no action' }),
    routeId: text('route_id')
      .notNull()
      .references(() => winterRoutes.id, { onDelete: 'no action' }),
    /** dispatched | in_progress | completed (derived from the visits) */
    status: text('status').notNull().default('dispatched'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('winter_runs_storm_route_uq').on(t.stormId, t.routeId),
    index('winter_runs_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('winter_runs_org_storm_created_idx').on(t.organizationId, t.stormId, t.createdAt, t.id),
    index('winter_runs_org_route_created_idx').on(t.organizationId, t.routeId, t.createdAt, t.id),
  ],
);

/** A visit of a run: the stop as it was at dispatch (billing included), then what the crew recorded. */
export const winterVisits = pgTable(
  'winter_visits',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    runId: text('run_id')
      .notNull()
      .references(() => winterRuns.id, { onDelete: 'cascade' }),
    /** The stop it came from (no foreign key: the stop may be edited away, the visit stays). */
    stopId: text('stop_id').notNull(),
    propertyId: text('property_id')
      .notNull()
      .references(() => properties.id, { onDelete: 'no action' }),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'no action' }),
    sequence: integer('sequence').notNull(),
    services: text('services').array().notNull(),
    billingMode: text('billing_mode').notNull(),
    priceCents: bigint('price_cents', { mode: 'number' }).notNull(),
    /** pending | serviced | skipped */
    status: text('status').notNull().default('pending'),
    servicedAt: ts('serviced_at'),
    pushes: integer('pushes'),
    saltLbs: doublePrecision('salt_lbs'),
    notes: text('notes'),
    recordedAt: ts('recorded_at'),
    /**
     * Set by storm billing, in the transaction that creates the invoice. Deleting that
     * draft invoice clears it, so the visit can be billed again.
     */
    invoiceId: text('invoice_id').references(() => invoices.id, { onDelete: 'set null' }),
    billedCents: bigint('billed_cents', { mode: 'number' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('winter_visits_org_run_seq_idx').on(t.organizationId, t.runId, t.sequence, t.id),
    /** The dashboard counts serviced visits by when they were serviced. */
    index('winter_visits_org_serviced_idx').on(t.organizationId, t.servicedAt).where(sql`${t.status} = 'serviced'`),
    index('winter_visits_org_unbilled_idx')
      .on(t.organizationId, t.runId)
      .where(sql`${t.invoiceId} IS NULL AND ${t.status} = 'serviced'`),
  ],
);
