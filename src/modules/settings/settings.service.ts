import { eq } from 'drizzle-orm';
import { organizations } from '../../db/schema/index.js';
import { notFound } from '../../platform/errors.js';
import type { Ctx } from '../../platform/tenancy.js';

/** Organization settings (decisions §4) with their defaults. Money thresholds are cents. */
export interface OrgSettings {
  timezone: string;
  /** Percent, 0..100, up to 3 decimals. */
  taxRate: number;
  currency: string;
  paymentTermsDays: number;
  billApprovalThresholdCents: number | null;
  companyName: string | null;
  companyEmail: string | null;
  companyPhone: string | null;
  companyAddress: string | null;
  plan: string;
  name: string;
}

export const SETTINGS_DEFAULTS = {
  taxRate: 0,
  currency: 'USD',
  paymentTermsDays: 30,
  billApprovalThresholdCents: null,
  companyName: null,
  companyEmail: null,
  companyPhone: null,
  companyAddress: null,
} as const;

/** The settings of the context's organization; every module reads them through here. */
export async function getOrgSettings(ctx: Ctx): Promise<OrgSettings> {
  const [org] = await ctx.tx.select().from(organizations).where(eq(organizations.id, ctx.organizationId));
  if (!org) throw notFound('Organization');
  const stored = (org.settings ?? {}) as Partial<OrgSettings>;
  return {
    ...SETTINGS_DEFAULTS,
    ...stored,
    timezone: org.timezone,
    plan: org.plan,
    name: org.name,
  };
}
