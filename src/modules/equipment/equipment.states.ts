import { invalidState } from '../../platform/errors.js';
import { next, stateMachine } from '../../platform/state-machine.js';
import type { EquipmentStatus } from './equipment.schemas.js';

export type EquipmentTrigger = 'check_out' | 'check_in' | 'maintain' | 'retire' | 'release';

/**
 * Equipment status. Check-out and check-in are the only ways in and out of `in_use`;
 * PATCH {status} moves between available, maintenance and retired, the status asked
 * for naming the trigger (PATCH_TRIGGER).
 */
export const equipmentMachine = stateMachine<EquipmentStatus, EquipmentTrigger>('equipment', {
  available: { check_out: 'in_use', maintain: 'maintenance', retire: 'retired' },
  in_use: { check_in: 'available' },
  maintenance: { release: 'available', retire: 'retired' },
  retired: { release: 'available' },
});

const PATCH_TRIGGER: Partial<Record<EquipmentStatus, EquipmentTrigger>> = {
  available: 'release',
  maintenance: 'maintain',
  retired: 'retire',
};
const ACTION_TRIGGER = { checkOut: 'check_out', checkIn: 'check_in' } as const;

/**
 * The status an action leads to by the table, or 409. A PATCH with the status the item
 * already has changes nothing and is accepted (a form sends every field back).
 */
export function moveEquipment(action: 'checkOut' | 'checkIn' | 'patch', from: string, to: EquipmentStatus) {
  if (action === 'patch' && from === to) return to;
  const trigger = action === 'patch' ? PATCH_TRIGGER[to] : ACTION_TRIGGER[action];
  if (trigger === undefined || next(equipmentMachine, from as EquipmentStatus, trigger) !== to) {
    throw invalidState(`Equipment that is ${from} cannot go to ${to} (${action})`);
  }
  return to;
}
