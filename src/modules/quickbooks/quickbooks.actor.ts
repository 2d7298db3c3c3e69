import { systemActor } from '../../platform/tenancy.js';

/** Who the sync's writes are by, in the audit trail. */
export const SYNC_ACTOR = systemActor('quickbooks.sync');
