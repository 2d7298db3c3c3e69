import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  doublePrecision,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { invoices } from './billing.js';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { crews } from './crew-tracking.js';
import { customers, properties } from './customers.js';

/** A snow route: ordered stops on the organization's properties (operations.md §6). */
export const winterRoutes = pgTable(
  'winter_routes',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    crewId: text('crew_id'),
    depotLat: doublePrecision('depot_lat'),
    depotLng: doublePrecision('depot_lng'),
    active: boolean('active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'winter_routes_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'winter_routes_crew_id_fk',
      columns: [t.organizationId, t.crewId],
      foreignColumns: [crews.organizationId, crews.id],
    }),
    index('winter_routes_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('winter_routes_org_active_created_idx').on(t.organizationId, t.active, t.createdAt, t.id),
  ],
);

/** A stop of a route; a property appears at most once in a route. A deleted property leaves its routes. */
export const winterRouteStops = pgTable(
  'winter_route_stops',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    routeId: text('route_id').notNull(),
    propertyId: text('property_id').notNull(),
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
    primaryKey({ name: 'winter_route_stops_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'winter_route_stops_route_id_fk',
      columns: [t.organizationId, t.routeId],
      foreignColumns: [winterRoutes.organizationId, winterRoutes.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'winter_route_stops_property_id_fk',
      columns: [t.organizationId, t.propertyId],
      foreignColumns: [properties.organizationId, properties.id],
    }).onDelete('cascade'),
    index('winter_route_stops_org_route_seq_idx').on(t.organizationId, t.routeId, t.sequence, t.id),
    uniqueIndex('winter_route_stops_route_property_uq').on(t.organizationId, t.routeId, t.propertyId),
  ],
);

export const storms = pgTable(
  'storms',
  {
    id: text('id').notNull(),
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
    primaryKey({ name: 'storms_pkey', columns: [t.organizationId, t.id] }),
    index('storms_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    /** The dashboard counts storms by when they started. */
    index('storms_org_started_idx').on(t.organizationId, t.startedAt),
  ],
);

/** One run per route per storm: the unique index makes a concurrent second dispatch fail. */
export const winterRuns = pgTable(
  'winter_runs',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    stormId: text('storm_id').notNull(),
    routeId: text('route_id').notNull(),
    /** dispatched | in_progress | completed (derived from the visits) */
    status: text('status').notNull().default('dispatched'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'winter_runs_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'winter_runs_storm_id_fk',
      columns: [t.organizationId, t.stormId],
      foreignColumns: [storms.organizationId, storms.id],
    }),
    foreignKey({
      name: 'winter_runs_route_id_fk',
      columns: [t.organizationId, t.routeId],
      foreignColumns: [winterRoutes.organizationId, winterRoutes.id],
    }),
    uniqueIndex('winter_runs_storm_route_uq').on(t.organizationId, t.stormId, t.routeId),
    index('winter_runs_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('winter_runs_org_storm_created_idx').on(t.organizationId, t.stormId, t.createdAt, t.id),
    index('winter_runs_org_route_created_idx').on(t.organizationId, t.routeId, t.createdAt, t.id),
  ],
);

/** A visit of a run: the stop as it was at dispatch (billing included), then what the crew recorded. */
export const winterVisits = pgTable(
  'winter_visits',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    runId: text('run_id').notNull(),
    /** The stop it came from (no foreign key: the stop may be edited away, the visit stays). */
    stopId: text('stop_id').notNull(),
    propertyId: text('property_id').notNull(),
    customerId: text('customer_id').notNull(),
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
    invoiceId: text('invoice_id'),
    billedCents: bigint('billed_cents', { mode: 'number' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'winter_visits_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'winter_visits_run_id_fk',
      columns: [t.organizationId, t.runId],
      foreignColumns: [winterRuns.organizationId, winterRuns.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'winter_visits_property_id_fk',
      columns: [t.organizationId, t.propertyId],
      foreignColumns: [properties.organizationId, properties.id],
    }),
    foreignKey({
      name: 'winter_visits_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }),
    foreignKey({
      name: 'winter_visits_invoice_id_fk',
      columns: [t.organizationId, t.invoiceId],
      foreignColumns: [invoices.organizationId, invoices.id],
    }),
    index('winter_visits_org_run_seq_idx').on(t.organizationId, t.runId, t.sequence, t.id),
    /** The dashboard counts serviced visits by when they were serviced. */
    index('winter_visits_org_serviced_idx').on(t.organizationId, t.servicedAt).where(sql`${t.status} = 'serviced'`),
    index('winter_visits_org_unbilled_idx')
      .on(t.organizationId, t.runId)
      .where(sql`${t.invoiceId} IS NULL AND ${t.status} = 'serviced'`),
  ],
);
