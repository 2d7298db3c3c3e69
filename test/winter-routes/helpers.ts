import { expect } from 'vitest';
import type { TestUser } from '../harness.js';

/** A customer through the REST API. */
export async function customer(owner: TestUser, firstName = 'Pat') {
  const res = await owner.call('POST', '/api/customers', { firstName, lastName: 'Snow' });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as string;
}

/** A property through the REST API, with coordinates unless `point` is null. */
export async function property(
  owner: TestUser,
  customerId: string,
  point: { lat: number; lng: number } | null,
  street = '1 Elm St',
) {
  const res = await owner.call('POST', '/api/properties', {
    customerId,
    street,
    city: 'Burlington',
    state: 'VT',
    ...(point ?? {}),
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as string;
}

export const stop = (propertyId: string, fields: Record<string, unknown> = {}) => ({
  propertyId,
  services: ['plow'],
  billing: { mode: 'per_push', price: 45 },
  ...fields,
});

export async function route(owner: TestUser, body: Record<string, unknown>) {
  const res = await owner.call('POST', '/api/winter-routes', { name: 'North', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as {
    id: string;
    stops: Array<{ id: string; propertyId: string; sequence: number }>;
  };
}

export async function storm(owner: TestUser, body: Record<string, unknown> = {}) {
  const res = await owner.call('POST', '/api/winter-routes/storms', {
    name: 'Jan 5',
    startedAt: '2026-01-05T03:00:00Z',
    snowfallInches: 4,
    ...body,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: string; name: string };
}

export interface RunT {
  id: string;
  routeId: string;
  status: string;
  visits: Array<{
    id: string;
    propertyId: string;
    customerId: string;
    status: string;
    sequence: number;
    billed: boolean;
    billing: { mode: string; price: number };
  }>;
}
