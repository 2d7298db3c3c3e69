import { stateMachine } from '../../platform/state-machine.js';

export const MAIL_STATUSES = ['pending', 'sent', 'failed'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

/**
 * A queued mail (mail.tasks.ts): the mail server accepts it (`sent`), or refuses it or
 * cannot be reached and the job waits for its next attempt (`retry`), until it is given
 * up after MAX_MAIL_ATTEMPTS (`give_up`).
 */
export const mailMachine = stateMachine<MailStatus, 'accept' | 'retry' | 'give_up'>('mail job', {
  pending: { accept: 'sent', retry: 'pending', give_up: 'failed' },
  sent: {},
  failed: {},
});
