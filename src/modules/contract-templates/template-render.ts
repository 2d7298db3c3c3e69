/**
 * Contract template placeholders. A template may use only these names; they are
 * filled from the contract, its customer and the organization when the contract
 * is created (and again when a draft is edited). A value that is not set (no end
 * date, say) renders as an empty string.
 */
export const PLACEHOLDERS = [
  'customer.name',
  'customer.email',
  'customer.phone',
  'customer.address',
  'company.name',
  'property.address',
  'title',
  'startDate',
  'endDate',
  'totalValue',
] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

const KNOWN = new Set<string>(PLACEHOLDERS);
const PATTERN = /\{\{\s*([A-Za-z0-9_.]+)\s*\}\}/g;

/** The distinct placeholder names a body uses, in order of first use. */
export function placeholdersIn(body: string): string[] {
  return [...new Set([...body.matchAll(PATTERN)].map((m) => m[1] as string))];
}

export function unknownPlaceholders(body: string): string[] {
  return placeholdersIn(body).filter((name) => !KNOWN.has(name));
}

export function renderTemplate(body: string, values: Record<Placeholder, string>): string {
  return body.replace(PATTERN, (whole, name: string) => (KNOWN.has(name) ? values[name as Placeholder] : whole));
}
