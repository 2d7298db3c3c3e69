import type { Tx } from '../../db/client.js';
import { members } from '../../db/schema/index.js';
import { newId } from '../../platform/ids.js';
import type { Role } from '../../platform/tenancy.js';

/**
 * Makes a user a member of an organization: its owner when the organization is created,
 * the invited role when an invitation is accepted. The members module owns the table;
 * a user who is a member already stays as they are. `tx` is inside the organization's tenant.
 */
export async function addMember(tx: Tx, organizationId: string, userId: string, role: Role): Promise<void> {
  await tx
    .insert(members)
    .values({ id: newId('mem'), organizationId, userId, role })
    .onConflictDoNothing();
}
