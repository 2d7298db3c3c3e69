import { Decimal } from 'decimal.js';
import type { Plan } from '../../config.js';
import type { Tx } from '../../db/client.js';
import { sqlStateOf } from '../../db/pg-errors.js';
import { forgetSecret, hashSecret, recordSecret } from '../../platform/auth/secret-lookups.js';
import { isValidTimeZone } from '../../platform/dates.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { fromCents, toCents } from '../../platform/money.js';
import { isPhoneCountry, toE164 } from '../../platform/phones.js';
import type { SecretBox } from '../../platform/secrets.js';
import type { Ctx } from '../../platform/tenancy.js';
import { mergeOrganizationSettings, organizationRow, organizationRowsOf } from '../organizations/organizations.refs.js';
import type { UpdateSettingsInput } from './settings.schemas.js';

/**
 * A booking slug reaches the public form without an organization, so it is mapped in the global
 * `secret_lookups` (kind `booking_slug`) in this same transaction (operations.md §13); that
 * table's key (kind, hash) is also what keeps a slug unique among organizations.
 */
async function moveBookingSlug(ctx: Ctx, before: string | null, after: string | null) {
  if (before !== null) await forgetSecret(ctx.tx, 'booking_slug', hashSecret(before));
  if (after === null) return;
  try {
    await recordSecret(ctx.tx, 'booking_slug', hashSecret(after));
  } catch (err) {
    if (sqlStateOf(err) === '23505')
      throw new AppError('CONFLICT', 'bookingSlug is taken by another organization; choose another');
    throw err;
  }
}

/** Organization settings (decisions §4) with their defaults. Money thresholds are cents. */
export interface OrgSettings {
  timezone: string;
  /** Percent, 0..100, up to 3 decimals. */
  taxRate: number;
  currency: string;
  paymentTermsDays: number;
  /** Days ahead that recurring schedules have their visits made (1..366). */
  visitHorizonDays: number;
  /** Hours before a visit that the customer is mailed a reminder; null = off. */
  visitReminderHours: number | null;
  /** Where crews start their day: the first leg of a day route. */
  depot: { lat: number; lng: number } | null;
  billApprovalThresholdCents: number | null;
  /** Owners are mailed when a customer approves an estimate or signs a contract. */
  notifyOwners: boolean;
  companyName: string | null;
  companyEmail: string | null;
  companyPhone: string | null;
  companyAddress: string | null;
  /** The public booking form's slug (/book/{slug}); null = no public form. Mapped in secret_lookups too. */
  bookingSlug: string | null;
  /** Stripe's publishable key (pk_…): public, the customer page hands it to Stripe.js. */
  stripePublishableKey: string | null;
  /** Stripe's endpoint signing secret, sealed with SecretBox (write-only: never shown back). */
  stripeWebhookSecretSealed: string | null;
  /** The organization's Stripe secret API key (sk_…/rk_…), sealed with SecretBox (write-only). */
  stripeSecretKeySealed: string | null;
  /** Twilio (operations.md §10): the account SID (AC…), public. */
  twilioAccountSid: string | null;
  /** Twilio's auth token, sealed with SecretBox (write-only): calls the API and checks callbacks' signatures. */
  twilioAuthTokenSealed: string | null;
  /** Texts go from this E.164 number or Messaging Service SID (MG…). */
  smsFrom: string | null;
  smsEnabled: boolean;
  /** Automatic texts falling inside wait for `end` (local time); null = none. */
  smsQuietHours: { start: string; end: string } | null;
  /** Channels of visit reminders. */
  reminderChannels: ('email' | 'sms')[];
  /** ISO 3166 alpha-2: how a phone written without `+` is read. */
  country: string;
  plan: string;
  name: string;
}

export const SETTINGS_DEFAULTS = {
  taxRate: 0,
  currency: 'USD',
  paymentTermsDays: 30,
  visitHorizonDays: 56,
  visitReminderHours: null,
  depot: null,
  billApprovalThresholdCents: null,
  notifyOwners: true,
  companyName: null,
  companyEmail: null,
  companyPhone: null,
  companyAddress: null,
  bookingSlug: null,
  stripePublishableKey: null,
  stripeWebhookSecretSealed: null,
  stripeSecretKeySealed: null,
  twilioAccountSid: null,
  twilioAuthTokenSealed: null,
  smsFrom: null,
  smsEnabled: false,
  smsQuietHours: null,
  reminderChannels: ['email'],
  country: 'US',
} as const satisfies Partial<OrgSettings>;

/** The settings of the context's organization; every module reads them through here. */
export async function getOrgSettings(ctx: Ctx): Promise<OrgSettings> {
  const org = await organizationRow(ctx);
  if (!org) throw notFound('Organization');
  return settingsOfRow(org);
}

type OrganizationRow = { settings: unknown; timezone: string; plan: string; name: string };

function settingsOfRow(org: OrganizationRow): OrgSettings {
  const stored = (org.settings ?? {}) as Partial<OrgSettings>;
  return {
    ...SETTINGS_DEFAULTS,
    ...stored,
    timezone: org.timezone,
    plan: org.plan,
    name: org.name,
  };
}

/**
 * The settings of many organizations by id, read in one statement of a cross-tenant transaction
 * (`asPlatform`: a worker serving a batch of organizations at once, such as the texts worker);
 * an unknown id is left out.
 */
export async function settingsOfOrganizations(tx: Tx, ids: string[]): Promise<Map<string, OrgSettings>> {
  const rows = await organizationRowsOf(tx, ids);
  return new Map(rows.map((org) => [org.id, settingsOfRow(org)]));
}

/** The organization's IANA timezone (calendar dates of request fields, see platform/calendar-date.ts). */
export async function orgTimezone(ctx: Ctx): Promise<string> {
  return (await getOrgSettings(ctx)).timezone;
}

/** The settings as GET /api/settings shows them (money in currency units, plan read-only). */
export function settingsView(s: OrgSettings) {
  return {
    timezone: s.timezone,
    taxRate: s.taxRate,
    currency: s.currency,
    paymentTermsDays: s.paymentTermsDays,
    visitHorizonDays: s.visitHorizonDays,
    visitReminderHours: s.visitReminderHours,
    depot: s.depot,
    billApprovalThreshold: s.billApprovalThresholdCents === null ? null : fromCents(s.billApprovalThresholdCents),
    notifyOwners: s.notifyOwners,
    companyName: s.companyName,
    companyEmail: s.companyEmail,
    companyPhone: s.companyPhone,
    companyAddress: s.companyAddress,
    bookingSlug: s.bookingSlug,
    stripePublishableKey: s.stripePublishableKey,
    stripeWebhookConfigured: s.stripeWebhookSecretSealed !== null,
    stripeSecretKeyConfigured: s.stripeSecretKeySealed !== null,
    twilioAccountSid: s.twilioAccountSid,
    twilioConfigured: s.twilioAccountSid !== null && s.twilioAuthTokenSealed !== null,
    smsFrom: s.smsFrom,
    smsEnabled: s.smsEnabled,
    smsQuietHours: s.smsQuietHours,
    reminderChannels: s.reminderChannels,
    country: s.country,
    plan: s.plan as Plan,
  };
}

const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

/**
 * Checks everything JSON Schema cannot (IANA zone, ISO 4217 code, decimals) before
 * writing, then merges into `organizations.settings` (timezone has its own column).
 * Keys are OrgSettings' names, so getOrgSettings reads them back unchanged.
 */
export async function updateOrgSettings(ctx: Ctx, input: UpdateSettingsInput, box?: SecretBox) {
  if (input.timezone !== undefined && !isValidTimeZone(input.timezone)) {
    throw invalidField('timezone', 'must be an IANA timezone such as America/Chicago');
  }
  if (input.currency !== undefined && !CURRENCIES.has(input.currency)) {
    throw invalidField('currency', 'must be an ISO 4217 currency code such as USD or EUR');
  }
  if (input.taxRate !== undefined && new Decimal(input.taxRate).decimalPlaces() > 3) {
    throw invalidField('taxRate', 'must have at most three decimals');
  }
  if (input.country !== undefined && !isPhoneCountry(input.country)) {
    throw invalidField('country', 'must be an ISO 3166 two-letter country code such as US or CA');
  }
  if (input.smsFrom?.startsWith('+') && toE164(input.smsFrom, 'US') !== input.smsFrom) {
    throw invalidField(
      'smsFrom',
      'must be a valid phone number in E.164 (+15551234567) or a Messaging Service SID (MG…)',
    );
  }
  const patch: Partial<OrgSettings> = {};
  if (input.billApprovalThreshold !== undefined) {
    patch.billApprovalThresholdCents =
      input.billApprovalThreshold === null ? null : toCents(input.billApprovalThreshold, 'billApprovalThreshold');
  }
  for (const key of [
    'taxRate',
    'currency',
    'paymentTermsDays',
    'visitHorizonDays',
    'visitReminderHours',
    'depot',
    'notifyOwners',
    'twilioAccountSid',
    'smsFrom',
    'smsEnabled',
    'smsQuietHours',
    'country',
  ] as const) {
    if (input[key] !== undefined) (patch as Record<string, unknown>)[key] = input[key];
  }
  for (const key of [
    'companyName',
    'companyEmail',
    'companyPhone',
    'companyAddress',
    'stripePublishableKey',
  ] as const) {
    const value = input[key];
    if (value !== undefined) patch[key] = value === null || value.trim() === '' ? null : value.trim();
  }
  if (input.stripeWebhookSecret !== undefined) {
    if (input.stripeWebhookSecret !== null && !box) throw new Error('updateOrgSettings needs a SecretBox to seal');
    patch.stripeWebhookSecretSealed =
      input.stripeWebhookSecret === null ? null : (box as SecretBox).seal(input.stripeWebhookSecret);
  }
  if (input.stripeSecretKey !== undefined) {
    if (input.stripeSecretKey !== null && !box) throw new Error('updateOrgSettings needs a SecretBox to seal');
    patch.stripeSecretKeySealed =
      input.stripeSecretKey === null ? null : (box as SecretBox).seal(input.stripeSecretKey);
  }
  if (input.reminderChannels !== undefined) patch.reminderChannels = [...new Set(input.reminderChannels)];
  if (input.twilioAuthToken !== undefined) {
    if (input.twilioAuthToken !== null && !box) throw new Error('updateOrgSettings needs a SecretBox to seal');
    patch.twilioAuthTokenSealed =
      input.twilioAuthToken === null ? null : (box as SecretBox).seal(input.twilioAuthToken);
  }
  if (input.bookingSlug !== undefined) {
    const before = (await getOrgSettings(ctx)).bookingSlug;
    if (input.bookingSlug !== before) {
      await moveBookingSlug(ctx, before, input.bookingSlug);
      patch.bookingSlug = input.bookingSlug;
    }
  }
  await mergeOrganizationSettings(ctx, patch, input.timezone);
  return settingsView(await getOrgSettings(ctx));
}
