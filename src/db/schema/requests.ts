import { sql } from 'drizzle-orm';
import { boolean, date, foreignKey, index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { estimates } from './billing.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { customers } from './customers.js';
import { jobs } from './jobs.js';

/** What the booking form's SMS box said when it was ticked (operations.md §10, source `request_form`). */
export interface SmsConsentEvidence {
  /** When the request was sent (UTC, ISO 8601). */
  at: string;
  /** The address the form was sent from. */
  ip: string;
  /** The form's exact wording next to the box. */
  wording: string;
}

/** Requests from the public (operations.md §12; drizzle/0040_requests.sql). */
export const requests = pgTable(
  'requests',
  {
    organizationId: organizationId(),
    id: text('id').notNull(),
    /** new | converted | declined | archived */
    status: text('status').notNull().default('new'),
    firstName: text('first_name').notNull(),
    lastName: text('last_name'),
    email: text('email'),
    phone: text('phone'),
    street: text('street').notNull(),
    city: text('city').notNull(),
    state: text('state'),
    zip: text('zip'),
    serviceIds: text('service_ids').array().notNull().default(sql`'{}'::text[]`),
    description: text('description').notNull(),
    preferredDates: date('preferred_dates', { mode: 'string' }).array().notNull().default(sql`'{}'::date[]`),
    /** morning | afternoon | any */
    preferredTime: text('preferred_time').notNull().default('any'),
    smsConsent: boolean('sms_consent').notNull().default(false),
    smsConsentEvidence: jsonb('sms_consent_evidence').$type<SmsConsentEvidence>(),
    sourceIp: text('source_ip'),
    customerId: text('customer_id'),
    estimateId: text('estimate_id'),
    jobId: text('job_id'),
    declineReason: text('decline_reason'),
    convertedAt: timestamp('converted_at', { withTimezone: true, mode: 'date' }),
    declinedAt: timestamp('declined_at', { withTimezone: true, mode: 'date' }),
    archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'requests_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'requests_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'requests_estimate_id_fk',
      columns: [t.organizationId, t.estimateId],
      foreignColumns: [estimates.organizationId, estimates.id],
    }),
    foreignKey({
      name: 'requests_job_id_fk',
      columns: [t.organizationId, t.jobId],
      foreignColumns: [jobs.organizationId, jobs.id],
    }),
    index('requests_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('requests_org_status_created_idx').on(t.organizationId, t.status, t.createdAt, t.id),
    index('requests_org_email_idx').on(t.organizationId, sql`lower(${t.email})`, t.createdAt),
    index('requests_org_phone_idx').on(t.organizationId, t.phone, t.createdAt),
    index('requests_org_estimate_idx').on(t.organizationId, t.estimateId).where(sql`${t.estimateId} IS NOT NULL`),
    index('requests_org_job_idx').on(t.organizationId, t.jobId).where(sql`${t.jobId} IS NOT NULL`),
    index('requests_org_customer_idx').on(t.organizationId, t.customerId).where(sql`${t.customerId} IS NOT NULL`),
  ],
);

/** ALTCHA solutions already spent, so each is accepted once across every process (operations.md §12). */
export const altchaSpent = pgTable(
  'altcha_spent',
  {
    organizationId: organizationId(),
    challengeKey: text('challenge_key').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [
    primaryKey({ name: 'altcha_spent_pkey', columns: [t.organizationId, t.challengeKey] }),
    index('altcha_spent_org_expires_idx').on(t.organizationId, t.expiresAt),
  ],
);
