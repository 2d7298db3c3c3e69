import { recordSmsConsent, requireCustomer } from '../modules/customers/customers.refs.js';
import { createCustomer } from '../modules/customers/customers.service.js';
import { createEstimate } from '../modules/estimates/estimates.service.js';
import { createJob } from '../modules/jobs/jobs.service.js';
import { createProperty } from '../modules/properties/properties.service.js';
import type { ConvertRequestInput } from '../modules/requests/requests.schemas.js';
import { markRequestConverted, requestToConvert } from '../modules/requests/requests.service.js';
import { servicesStillListed } from '../modules/services/services.refs.js';
import { orgTimezone } from '../modules/settings/settings.service.js';
import { today } from '../platform/dates.js';
import type { Ctx } from '../platform/tenancy.js';

/**
 * `POST /api/requests/{id}/convert` (operations.md §12): a request from the public becomes a
 * draft estimate or a job, for a customer that exists when one does.
 *
 * requests (the request, locked: new, else 409; the customer it matches) → customers (the
 * given customer checked, else the matched one, else a new customer) → properties (a new
 * customer's property at the request's address; the form's texting consent recorded, with its
 * evidence) → services (the requested ones still in the
 * catalog) → estimates (a draft with a line per service, or one line for the request) or jobs
 * (a job on the date asked for; job.created) → requests (converted, with what it became;
 * request.converted).
 */
export async function convertRequest(ctx: Ctx, id: string, input: ConvertRequestInput) {
  const { request, matchedCustomerId } = await requestToConvert(ctx, id);
  let customerId = input.customerId ?? matchedCustomerId;
  let propertyId: string | undefined;
  if (input.customerId !== undefined) await requireCustomer(ctx, input.customerId);
  if (customerId === null) {
    const customer = await createCustomer(ctx, {
      firstName: request.firstName,
      lastName: request.lastName,
      email: request.email,
      phone: request.phone,
      billingAddress: request.address.street,
      billingCity: request.address.city,
      billingState: request.address.state,
      billingZip: request.address.zip,
    });
    customerId = customer.id;
    const property = await createProperty(ctx, {
      customerId,
      street: request.address.street,
      city: request.address.city,
      state: request.address.state,
      zip: request.address.zip,
    });
    propertyId = property.id;
  }
  // The form's texting consent becomes the customer's consent record, with the form's evidence
  // (when, from which address, the words the requester agreed to): operations.md §10, §12.
  if (request.smsConsent) {
    await recordSmsConsent(ctx, customerId, {
      status: 'opted_in',
      source: 'request_form',
      evidence: JSON.stringify(request.smsConsentEvidence),
    });
  }
  const services = await servicesStillListed(ctx, request.serviceIds);
  if (input.to === 'estimate') {
    const lineItems =
      services.length > 0
        ? services.map((s) => ({ serviceId: s.id, quantity: 1 }))
        : [{ description: `Request: ${request.description}`.slice(0, 1000), quantity: 1, unitPrice: 0 }];
    const estimate = await createEstimate(ctx, { customerId, propertyId, lineItems, notes: request.description });
    return markRequestConverted(ctx, id, { customerId, estimateId: estimate.id });
  }
  const job = await createJob(ctx, {
    customerId,
    propertyId,
    scheduledDate: input.scheduledDate ?? request.preferredDates[0] ?? today(await orgTimezone(ctx)),
    services: services.map((s) => s.name),
    notes: request.description,
  });
  return markRequestConverted(ctx, id, { customerId, jobId: job.id });
}
