import { invalidState } from '../../platform/errors.js';
import type { EquipmentStatus } from './equipment.schemas.js';

/**
 * Equipment status transitions, by action. Check-out and check-in are the only
 * ways in and out of `in_use`; PATCH moves between available, maintenance and retired.
 */
export const EQUIPMENT_TRANSITIONS: Record<string, Partial<Record<EquipmentStatus, EquipmentStatus[]>>> = {
  checkOut: { available: ['in_use'] },
  checkIn: { in_use: ['available'] },
  patch: {
    available: ['maintenance', 'retired'],
    maintenance: ['available', 'retired'],
    retired: ['available'],
  },
};

export function assertTransition(action: keyof typeof EQUIPMENT_TRANSITIONS, from: string, to: EquipmentStatus) {
  const allowed = EQUIPMENT_TRANSITIONS[action]?.[from as EquipmentStatus] ?? [];
  if (from === to && action === 'patch') return;
  if (!allowed.includes(to)) throw invalidState(`Equipment that is ${from} cannot go to ${to} (${action})`);
}
