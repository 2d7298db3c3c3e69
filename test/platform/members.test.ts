import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, apiKeyCaller, createHarness, type Harness, newTenant, type TestUser } from '../harness.js';
import { routeSecuritySuite } from '../security.js';

describe('managing members', () => {
  let h: Harness;
  let owner: TestUser;
  beforeAll(async () => {
    h = await createHarness();
    owner = await newTenant(h);
  });
  afterAll(async () => h?.close());

  const memberId = async (user: TestUser) =>
    (await owner.call('GET', '/api/members')).json().data.find((m: { userId: string }) => m.userId === user.userId)
      .id as string;

  it('changes roles; the removed member loses access at once', async () => {
    const crew = await addMember(h, owner, 'member');
    const id = await memberId(crew);
    const promoted = await owner.call('PATCH', `/api/members/${id}`, { role: 'admin' });
    expect(promoted.statusCode).toBe(200);
    expect(promoted.json().data).toMatchObject({ id, userId: crew.userId, role: 'admin' });
    expect((await crew.call('GET', '/api/invitations')).statusCode).toBe(200);

    const removed = await owner.call('DELETE', `/api/members/${id}`);
    expect(removed.statusCode).toBe(204);
    expect(removed.body).toBe('');
    const after = await crew.call('GET', '/api/members');
    expect(after.statusCode).toBe(403);
    expect(after.json().error.code).toBe('NO_ACTIVE_ORGANIZATION');
    expect((await owner.call('DELETE', `/api/members/${id}`)).statusCode).toBe(404);
  });

  it('never leaves the organization without an owner', async () => {
    const ownerId = await memberId(owner);
    const demote = await owner.call('PATCH', `/api/members/${ownerId}`, { role: 'admin' });
    expect(demote.statusCode).toBe(409);
    expect(demote.json().error.code).toBe('INVALID_STATE');
    const leave = await owner.call('DELETE', `/api/members/${ownerId}`);
    expect(leave.statusCode).toBe(409);

    // With a second owner, the first may step down.
    const second = await addMember(h, owner, 'admin');
    const secondId = await memberId(second);
    expect((await owner.call('PATCH', `/api/members/${secondId}`, { role: 'owner' })).statusCode).toBe(200);
    expect((await owner.call('PATCH', `/api/members/${ownerId}`, { role: 'admin' })).statusCode).toBe(200);
    // Now `owner` is an admin: it may not touch the remaining owner.
    const touch = await owner.call('DELETE', `/api/members/${secondId}`);
    expect(touch.statusCode).toBe(403);
    expect(touch.json().error.code).toBe('FORBIDDEN');
    const selfPromote = await owner.call('PATCH', `/api/members/${ownerId}`, { role: 'owner' });
    expect(selfPromote.statusCode).toBe(403);
    // Restore.
    expect((await second.call('PATCH', `/api/members/${ownerId}`, { role: 'owner' })).statusCode).toBe(200);
  });

  it('refuses bad bodies and other organizations’ members', async () => {
    const crew = await addMember(h, owner, 'member');
    const id = await memberId(crew);
    for (const body of [{ role: 'boss' }, {}, { role: 'admin', name: 'x' }]) {
      const res = await owner.call('PATCH', `/api/members/${id}`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    const other = await newTenant(h, { name: 'Other' });
    expect((await other.call('PATCH', `/api/members/${id}`, { role: 'admin' })).statusCode).toBe(404);
    expect((await other.call('DELETE', `/api/members/${id}`)).statusCode).toBe(404);
    const key = await apiKeyCaller(h, owner, 'admin');
    expect((await key.call('PATCH', `/api/members/${id}`, { role: 'admin' })).statusCode).toBe(200);
  });
});

routeSecuritySuite('members', async (h, owner) => {
  const crew = await addMember(h, owner, 'member');
  const list = (await owner.call('GET', '/api/members')).json().data;
  const id = list.find((m: { userId: string }) => m.userId === crew.userId).id;
  return [
    { method: 'GET', url: '/api/members' },
    { method: 'PATCH', url: `/api/members/${id}`, body: { role: 'member' }, crossTenant: true, adminOnly: true },
    { method: 'DELETE', url: `/api/members/${id}`, crossTenant: true, adminOnly: true },
  ];
});
