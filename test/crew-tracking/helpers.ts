import { caller, type Harness, type TestUser } from '../harness.js';

/** The caller's member id (mem_…) in their active organization. */
export async function memberIdOf(owner: TestUser, user: TestUser = owner): Promise<string> {
  const res = await owner.call('GET', '/api/members');
  const found = (res.json().data as Array<{ id: string; userId: string }>).find((m) => m.userId === user.userId);
  if (!found) throw new Error('member not found');
  return found.id;
}

/** Creates a device token for `memberId` and returns a caller presenting it. */
export async function deviceCaller(h: Harness, by: TestUser, memberId?: string) {
  const res = await by.call('POST', '/api/crew-tracking/devices', { name: 'Phone', ...(memberId ? { memberId } : {}) });
  if (res.statusCode !== 201) throw new Error(`device failed: ${res.statusCode} ${res.body}`);
  const data = res.json().data as { id: string; token: string; memberId: string };
  return { ...data, call: caller(h.app, { authorization: `Bearer ${data.token}` }) };
}
