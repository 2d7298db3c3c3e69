import type { Database } from '../db/client.js';
import { queueMail } from '../modules/mail/mail.service.js';
import { getOrgSettings } from '../modules/settings/settings.service.js';
import type { AccountMail } from '../platform/auth/better-auth.js';
import { lastOrganizationOf } from '../platform/auth/sessions.js';
import { mailHtml } from '../platform/html.js';
import type { Mailer } from '../platform/mail.js';
import { inTenant, systemActor } from '../platform/tenancy.js';

const ACTOR = systemActor('auth.password_reset');

/**
 * The password-reset mail Better Auth asks for (`POST /api/auth/request-password-reset`):
 * sessions and members (the organization the user last worked in) → settings (its name, so
 * the mail says who it is from) → mail (queued in that organization's outbox, sent and
 * retried by the worker). A user in no organization yet has no outbox: the mail goes out
 * at once through the mailer.
 */
export function passwordResetMail(deps: { database: Database; mailer: Mailer; baseUrl: string }): AccountMail {
  return {
    async passwordReset(user, token) {
      const link = `${deps.baseUrl}/app/reset-password?token=${encodeURIComponent(token)}`;
      const organizationId = await lastOrganizationOf(deps.database.platformDb, user.id);
      if (!organizationId) {
        await deps.mailer.send({ to: [user.email], ...content(null, link) });
        return;
      }
      await inTenant(deps.database.db, organizationId, ACTOR, async (ctx) => {
        const settings = await getOrgSettings(ctx);
        await queueMail(ctx, {
          documentType: 'account',
          documentId: user.id,
          to: [user.email],
          ...content(settings.companyName ?? settings.name, link),
        });
      });
    },
  };
}

function content(company: string | null, link: string) {
  const where = company ? `your ${company} account on the field-service CRM` : 'your field-service CRM account';
  const lines = [
    `Someone asked to reset the password of ${where}.`,
    'The link works once, for one hour. Setting a new password signs you out everywhere.',
  ];
  return {
    subject: company ? `Reset your password (${company})` : 'Reset your password',
    text: [
      ...lines,
      '',
      `Choose a new password: ${link}`,
      '',
      'If it was not you, ignore this mail: nothing changes.',
    ].join('\n'),
    html: mailHtml({
      heading: 'Reset your password',
      paragraphs: lines,
      action: { label: 'Choose a new password', url: link },
      footer: 'If it was not you, ignore this mail: nothing changes.',
    }),
  };
}
