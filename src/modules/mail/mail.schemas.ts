import { Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateTime, Nullable } from '../../platform/schemas.js';
import { MAIL_STATUSES } from './mail.states.js';

export const LastEmail = Nullable(
  Type.Object(
    {
      status: StringEnum(
        MAIL_STATUSES,
        'pending: queued or being retried (the mail server refused or was unreachable; `error` says why); sent: the mail server accepted it; failed: given up after repeated refusals',
      ),
      to: Type.Array(Type.String()),
      sentAt: Nullable(DateTime('When the mail server accepted it')),
      error: Nullable(Type.String({ description: 'The last refusal, while retrying or after giving up' })),
    },
    {
      additionalProperties: false,
      description:
        'The last mail sent about this document (null when none was ever sent); mail goes out in the background',
    },
  ),
);
