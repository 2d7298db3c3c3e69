import { ANONYMIZED_NAME, anonymizeCustomer as eraseCustomer } from '../modules/customers/customers.service.js';
import { anonymizePropertiesOf } from '../modules/properties/properties.refs.js';
import { anonymizeRequestsOf } from '../modules/requests/requests.refs.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/customers/{id}/anonymize`: erasure (decisions §4) of a customer's personal data,
 * irreversibly; documents and payments stay.
 *
 * customers (the customer locked, refused when already anonymized, its personal fields
 * cleared, customer.updated) → properties (the customer's service addresses, gate codes,
 * access notes and coordinates cleared, the street reading "Anonymized") → requests (those
 * converted for it lose the requester's name, contact, address, words and consent evidence).
 */
export async function anonymizeCustomer(ctx: Ctx, id: string) {
  const { customer, at } = await eraseCustomer(ctx, id);
  await anonymizePropertiesOf(ctx, id, ANONYMIZED_NAME, at);
  await anonymizeRequestsOf(ctx, id, ANONYMIZED_NAME, at);
  return customer;
}
