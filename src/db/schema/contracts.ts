import { type AnyPgColumn, date, index, integer, jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { customers, properties } from './customers.js';

export const contractTemplates = pgTable(
  'contract_templates',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    /** Text with placeholders such as {{customer.name}}, filled when a contract is created. */
    body: text('body').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('contract_templates_org_created_idx').on(t.organizationId, t.createdAt, t.id)],
);

/** A contract's line: money in cents; `amountCents` = round(quantity × unitPrice). */
export interface ContractLine {
  description: string;
  unitPriceCents: number;
  quantity: number;
  amountCents: number;
}

export const contracts = pgTable(
  'contracts',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    title: text('title').notNull(),
    customerId: text('customer_id')
      .notNull()
      .references(() => customers.id, { onDelete: 'cascade' }),
    propertyId: text('property_id').references(() => properties.id, { onDelete: 'set null' }),
    templateId: text('template_id').references(() => contractTemplates.id, { onDelete: 'set null' }),
    /** The template's body as it was at creation, so later template edits never change a contract. */
    templateBody: text('template_body'),
    /** draft | sent | signed | active | expired | canceled */
    status: text('status').notNull(),
    startDate: date('start_date', { mode: 'string' }),
    endDate: date('end_date', { mode: 'string' }),
    services: jsonb('services').$type<ContractLine[]>().notNull().default([]),
    totalValueCents: integer('total_value_cents').notNull().default(0),
    terms: text('terms'),
    /**
     * The signed or active contract this one amends (spec 3.4: a signed contract changes
     * only by a new contract or an amendment). The original is left as it is.
     */
    amendsContractId: text('amends_contract_id').references((): AnyPgColumn => contracts.id, {
      onDelete: 'set null',
    }),
    /** The full text the customer reads and signs. */
    content: text('content').notNull(),
    /** First time it was sent (analytics measure time to sign from here). */
    sentAt: ts('sent_at'),
    signedAt: ts('signed_at'),
    signerName: text('signer_name'),
    signerIp: text('signer_ip'),
    signerUserAgent: text('signer_user_agent'),
    /** SHA-256 (hex) of `content` at the moment of signing: evidence of what was signed. */
    signedContentSha256: text('signed_content_sha256'),
    activatedAt: ts('activated_at'),
    expiredAt: ts('expired_at'),
    canceledAt: ts('canceled_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('contracts_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('contracts_org_status_idx').on(t.organizationId, t.status, t.createdAt, t.id),
    index('contracts_org_customer_idx').on(t.organizationId, t.customerId, t.createdAt, t.id),
    index('contracts_org_amends_idx').on(t.organizationId, t.amendsContractId),
  ],
);

export const contractActivity = pgTable(
  'contract_activity',
  {
    id: text('id').primaryKey(),
    organizationId: organizationId(),
    contractId: text('contract_id')
      .notNull()
      .references(() => contracts.id, { onDelete: 'cascade' }),
    /** created | updated | sent | viewed | signed | activated | expired | canceled | amended | amendment_signed */
    type: text('type').notNull(),
    description: text('description').notNull(),
    /** User or API key id; null for the customer (portal) and the system (worker). */
    actorId: text('actor_id'),
    createdAt: createdAt(),
  },
  (t) => [index('contract_activity_org_contract_idx').on(t.organizationId, t.contractId, t.createdAt, t.id)],
);
