import { date, foreignKey, index, integer, jsonb, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { ts } from './column-types.js';
import { createdAt, organizationId, updatedAt } from './columns.js';
import { customers, properties } from './customers.js';

export const contractTemplates = pgTable(
  'contract_templates',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    name: text('name').notNull(),
    /** Text with placeholders such as {{customer.name}}, filled when a contract is created. */
    body: text('body').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'contract_templates_pkey', columns: [t.organizationId, t.id] }),
    index('contract_templates_org_created_idx').on(t.organizationId, t.createdAt, t.id),
  ],
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
    id: text('id').notNull(),
    organizationId: organizationId(),
    title: text('title').notNull(),
    customerId: text('customer_id').notNull(),
    propertyId: text('property_id'),
    templateId: text('template_id'),
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
    amendsContractId: text('amends_contract_id'),
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
    primaryKey({ name: 'contracts_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'contracts_customer_id_fk',
      columns: [t.organizationId, t.customerId],
      foreignColumns: [customers.organizationId, customers.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'contracts_property_id_fk',
      columns: [t.organizationId, t.propertyId],
      foreignColumns: [properties.organizationId, properties.id],
    }),
    foreignKey({
      name: 'contracts_template_id_fk',
      columns: [t.organizationId, t.templateId],
      foreignColumns: [contractTemplates.organizationId, contractTemplates.id],
    }),
    foreignKey({
      name: 'contracts_amends_contract_id_fk',
      columns: [t.organizationId, t.amendsContractId],
      foreignColumns: [t.organizationId, t.id],
    }),
    index('contracts_org_created_idx').on(t.organizationId, t.createdAt, t.id),
    index('contracts_org_status_idx').on(t.organizationId, t.status, t.createdAt, t.id),
    index('contracts_org_customer_idx').on(t.organizationId, t.customerId, t.createdAt, t.id),
    index('contracts_org_amends_idx').on(t.organizationId, t.amendsContractId),
  ],
);

export const contractActivity = pgTable(
  'contract_activity',
  {
    id: text('id').notNull(),
    organizationId: organizationId(),
    contractId: text('contract_id').notNull(),
    /** created | updated | sent | viewed | signed | activated | expired | canceled | amended | amendment_signed */
    type: text('type').notNull(),
    description: text('description').notNull(),
    /** User or API key id; null for the customer (portal) and the system (worker). */
    actorId: text('actor_id'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'contract_activity_pkey', columns: [t.organizationId, t.id] }),
    foreignKey({
      name: 'contract_activity_contract_id_fk',
      columns: [t.organizationId, t.contractId],
      foreignColumns: [contracts.organizationId, contracts.id],
    }).onDelete('cascade'),
    index('contract_activity_org_contract_idx').on(t.organizationId, t.contractId, t.createdAt, t.id),
  ],
);
