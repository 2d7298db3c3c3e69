import { markPhonesForReparse } from '../modules/customers/customers.phones.js';
import type { UpdateSettingsInput } from '../modules/settings/settings.schemas.js';
import { getOrgSettings, updateOrgSettings } from '../modules/settings/settings.service.js';
import type { SecretBox } from '../platform/secrets.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `PATCH /api/settings`: settings (the change, checked and merged) → customers (when `country`
 * changed, every customer's phone is marked to be read again with the new country, in this
 * transaction; the worker task `customers.phones` reads them in batches: customers.phones.ts).
 */
export async function updateSettings(ctx: Ctx, input: UpdateSettingsInput, box: SecretBox) {
  const before = input.country === undefined ? undefined : (await getOrgSettings(ctx)).country;
  const view = await updateOrgSettings(ctx, input, box);
  if (before !== undefined && view.country !== before) await markPhonesForReparse(ctx);
  return view;
}
