import { and, eq } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { invitations, users } from '../../db/schema/index.js';
import { setActiveOrganization } from '../../platform/auth/sessions.js';
import { asPlatform } from '../../platform/cross-tenant.js';
import { AppError, notFound } from '../../platform/errors.js';
import { mailHtml } from '../../platform/html.js';
import { newId } from '../../platform/ids.js';
import { listPage } from '../../platform/page-query.js';
import type { Page } from '../../platform/pagination.js';
import { type Ctx, type Role, withTenant } from '../../platform/tenancy.js';
import { queueMail } from '../mail/mail.service.js';
import { addMember } from '../members/members.refs.js';
import { getOrgSettings } from '../settings/settings.service.js';

const TTL_DAYS = 7;
type Row = typeof invitations.$inferSelect;

const view = (r: Row, baseUrl: string) => ({
  id: r.id,
  email: r.email,
  role: r.role as 'admin' | 'member',
  status: r.status as 'pending' | 'accepted',
  expiresAt: r.expiresAt,
  createdAt: r.createdAt,
  acceptUrl: `${baseUrl}/api/invitations/${r.id}/accept`,
});

export async function createInvitation(ctx: Ctx, baseUrl: string, input: { email: string; role: 'admin' | 'member' }) {
  const [row] = await ctx.tx
    .insert(invitations)
    .values({
      id: newId('ivt'),
      organizationId: ctx.organizationId,
      email: input.email.toLowerCase(),
      role: input.role,
      invitedBy: ctx.actor.id,
      expiresAt: new Date(Date.now() + TTL_DAYS * 86_400_000),
    })
    .returning();
  const invitation = view(row as Row, baseUrl);
  const settings = await getOrgSettings(ctx);
  const company = settings.companyName ?? settings.name;
  const role = invitation.role === 'admin' ? 'an admin' : 'a member';
  const expires = invitation.expiresAt.toISOString().slice(0, 10);
  // The console's page signs the invitee in (or up) and accepts with one button.
  const pageUrl = `${baseUrl}/app/invitations/${invitation.id}`;
  // Queued with the invitation, sent by the worker (retried while the mail server refuses).
  await queueMail(ctx, {
    documentType: 'invitation',
    documentId: invitation.id,
    to: [invitation.email],
    // The business's name in the subject: an invitation from "someone" reads like spam.
    subject: `You have been invited to join ${company} on the field-service CRM`,
    text: [
      `${company} invited you to join its team as ${role}.`,
      '',
      `Accept in the console: ${pageUrl}`,
      `(or, from your own code: sign in with ${invitation.email}, then POST ${invitation.acceptUrl})`,
      `The invitation expires on ${expires}.`,
    ].join('\n'),
    html: mailHtml({
      heading: `Join ${company}`,
      paragraphs: [
        `${company} invited you to join its team as ${role}.`,
        `Sign up or sign in with ${invitation.email}, then accept the invitation.`,
      ],
      action: { label: 'Accept the invitation', url: pageUrl },
      footer: `The invitation expires on ${expires}. If you did not expect it, ignore this mail.`,
    }),
  });
  return invitation;
}

export async function listInvitations(ctx: Ctx, baseUrl: string, page: Page) {
  const where = eq(invitations.organizationId, ctx.organizationId);
  const { rows, ...more } = await listPage(ctx.tx, ctx.organizationId, invitations, where, page);
  return { rows: rows.map((r) => view(r, baseUrl)), ...more };
}

/**
 * The invitation id is the capability (72 random bits), and it only works for the
 * user whose email it names. Looked up across tenants, since the invitee is not
 * yet in the organization; everything after that runs inside the tenant.
 */
export async function acceptInvitation(db: Db, userId: string, sessionId: string | undefined, id: string) {
  const { inv, user } = await asPlatform(db, async (tx) => ({
    inv: (await tx.select().from(invitations).where(eq(invitations.id, id)))[0],
    user: (await tx.select({ email: users.email }).from(users).where(eq(users.id, userId)))[0],
  }));
  if (!inv || !user || inv.email !== user.email.toLowerCase()) throw notFound('Invitation');
  if (inv.status !== 'pending') throw new AppError('INVALID_STATE', 'This invitation was already accepted');
  if (inv.expiresAt.getTime() < Date.now()) throw new AppError('INVALID_STATE', 'This invitation has expired');
  await withTenant(db, inv.organizationId, async (tx) => {
    const claimed = await tx
      .update(invitations)
      .set({ status: 'accepted' })
      .where(and(eq(invitations.id, id), eq(invitations.status, 'pending')))
      .returning({ id: invitations.id });
    if (claimed.length === 0) throw new AppError('INVALID_STATE', 'This invitation was already accepted');
    await addMember(tx, inv.organizationId, userId, inv.role as Role);
  });
  if (sessionId) await setActiveOrganization(db, sessionId, inv.organizationId);
  return { organizationId: inv.organizationId, role: inv.role as 'admin' | 'member' };
}
