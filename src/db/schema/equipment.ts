import { sql } from 'drizzle-orm';
import {
  bigint,
  date,
  doublePrecision,
  foreignKey,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { crews } from './crew-tracking.js';
import { jobs } from './jobs.js';
import { members } from './organizations.js';

/** Mowers, plows, trucks (operations.md §5). Serial numbers are unique per organization when given. */
export const equipment = pgTable(
  'equipment',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    category: text('category').notNull(),
    make: text('make'),
    model: text('model'),
    serialNumber: text('serial_number'),
    purchaseDate: date('purchase_date', { mode: 'string' }),
    purchaseCostCents: bigint('purchase_cost_cents', { mode: 'number' }),
    /** Engine hours; never goes down. */
    hourMeter: doublePrecision('hour_meter'),
    notes: text('notes'),
    /** available | in_use | maintenance | retired */
    status: text('status').notNull().default('available'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'equipment_pkey', columns: [t.organizationId, t.id] }),
    index('equipment_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    uniqueIndex('equipment_org_serial_uq')
      .on(t.organizationId, t.serialNumber)
      .where(sql`${t.serialNumber} IS NOT NULL`),
  ],
);

/** Check-out/check-in history; at most one open assignment per item (partial unique index). */
export const equipmentAssignments = pgTable(
  'equipment_assignments',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    equipmentId: text('equipment_id').notNull(),
    memberId: text('member_id'),
    crewId: text('crew_id'),
    jobId: text('job_id'),
    checkedOutAt: ts('checked_out_at').notNull(),
    checkedInAt: ts('checked_in_at'),
    hourMeterOut: doublePrecision('hour_meter_out'),
    hourMeterIn: doublePrecision('hour_meter_in'),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'equipment_assignments_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'equipment_assignments_equipment_id_fk',
      columns: [t.organizationId, t.equipmentId],
      foreignColumns: [equipment.organizationId, equipment.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'equipment_assignments_member_id_fk',
      columns: [t.organizationId, t.memberId],
      foreignColumns: [members.organizationId, members.id],
    }),
    foreignKey({
      name: 'equipment_assignments_crew_id_fk',
      columns: [t.organizationId, t.crewId],
      foreignColumns: [crews.organizationId, crews.id],
    }),
    foreignKey({
      name: 'equipment_assignments_job_id_fk',
      columns: [t.organizationId, t.jobId],
      foreignColumns: [jobs.organizationId, jobs.id],
    }),
    index('equipment_assignments_org_item_idx').on(t.organizationId, t.equipmentId, t.createdAt, t.id),
    uniqueIndex('equipment_assignments_open_uq')
      .on(t.organizationId, t.equipmentId)
      .where(sql`${t.checkedInAt} IS NULL`),
  ],
);

/** A recurring service: every N engine hours or every N days. */
export const maintenancePlans = pgTable(
  'maintenance_plans',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    equipmentId: text('equipment_id').notNull(),
    name: text('name').notNull(),
    everyHours: doublePrecision('every_hours'),
    everyDays: integer('every_days'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'maintenance_plans_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'maintenance_plans_equipment_id_fk',
      columns: [t.organizationId, t.equipmentId],
      foreignColumns: [equipment.organizationId, equipment.id],
    }).onDelete('cascade'),
    index('maintenance_plans_org_item_idx').on(t.organizationId, t.equipmentId, t.createdAt, t.id),
  ],
);

export const maintenanceLogs = pgTable(
  'maintenance_logs',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    equipmentId: text('equipment_id').notNull(),
    planId: text('plan_id'),
    performedAt: ts('performed_at').notNull(),
    /** The meter at the time of the work (the item's reading when none was given). */
    hourMeter: doublePrecision('hour_meter'),
    costCents: bigint('cost_cents', { mode: 'number' }),
    notes: text('notes').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'maintenance_logs_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'maintenance_logs_equipment_id_fk',
      columns: [t.organizationId, t.equipmentId],
      foreignColumns: [equipment.organizationId, equipment.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'maintenance_logs_plan_id_fk',
      columns: [t.organizationId, t.planId],
      foreignColumns: [maintenancePlans.organizationId, maintenancePlans.id],
    }),
    index('maintenance_logs_org_item_idx').on(t.organizationId, t.equipmentId, t.createdAt, t.id),
    index('maintenance_logs_org_plan_idx').on(t.organizationId, t.planId, t.performedAt),
  ],
);
