import { repriceSchedules, repriceWindow } from '../modules/jobs/schedules/schedules.reprice.js';
import { serviceToReprice, serviceView, setServicePrice } from '../modules/services/services.service.js';
import { fromCents, toCents } from '../platform/money.js';
import type { Ctx } from '../platform/tenancy.js';

export interface RepriceInput {
  unitPrice: number;
  from?: string | undefined;
  dryRun?: boolean | undefined;
}

/**
 * `POST /api/services/{id}/reprice`: a catalog price change carried to the schedules that use it.
 *
 * services (the service, locked; 404, inactive → 409) → schedules (`from` checked: today to the
 * visit horizon) → schedules (each active or paused schedule's lines naming the service take the
 * new price; its editable visits from `from` are rewritten) → services (the catalog's new price).
 * With `dryRun` nothing is written and the answer is the same.
 */
export async function repriceService(ctx: Ctx, id: string, input: RepriceInput) {
  const unitPriceCents = toCents(input.unitPrice, 'unitPrice');
  const current = await serviceToReprice(ctx, id);
  const window = await repriceWindow(ctx, input.from);
  const dryRun = input.dryRun === true;
  const schedules = await repriceSchedules(ctx, {
    serviceId: id,
    unitPriceCents,
    from: window.from,
    timezone: window.timezone,
    dryRun,
  });
  const service = dryRun
    ? { ...serviceView(current), unitPrice: fromCents(unitPriceCents) }
    : await setServicePrice(ctx, id, unitPriceCents);
  return {
    service,
    oldUnitPrice: fromCents(current.unitPriceCents),
    from: window.from,
    dryRun,
    schedules,
    visitsRepriced: schedules.reduce((n, s) => n + s.visitsRepriced, 0),
  };
}
