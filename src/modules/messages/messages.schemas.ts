import { type Static, Type } from 'typebox';
import { EnumList } from '../../platform/enum.js';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';
import { MESSAGE_KINDS, MESSAGE_STATUSES } from './messages.states.js';

export const MAX_BODY = 1600;

export const Message = Type.Object(
  {
    id: Type.String({ description: 'msg_…' }),
    customerId: Nullable(Type.String({ description: 'null for an inbound text from a number no customer has' })),
    direction: Type.Enum(['outbound', 'inbound']),
    to: Type.String({ description: 'E.164, or the Messaging Service SID texts go from' }),
    from: Type.String(),
    body: Type.String(),
    kind: Type.Enum([...MESSAGE_KINDS]),
    status: Type.Enum([...MESSAGE_STATUSES], {
      description:
        'Outbound: queued → sending → sent → delivered | undelivered | failed, or skipped (errorMessage says why); inbound: received',
    }),
    segments: Type.Integer({ description: 'SMS parts: GSM-7 160 (153 per part) or UCS-2 70 (67 per part)' }),
    errorCode: Nullable(
      Type.String({
        description: 'Twilio’s error code (21610: the number opted out at the carrier), or UNKNOWN_OUTCOME',
      }),
    ),
    errorMessage: Nullable(Type.String()),
    providerId: Nullable(Type.String({ description: 'Twilio’s MessageSid (SM…)' })),
    jobId: Nullable(Type.String()),
    invoiceId: Nullable(Type.String()),
    estimateId: Nullable(Type.String()),
    sendAfter: Nullable(DateTime('An automatic text made inside the quiet hours goes at their end')),
    createdAt: DateTime(),
    sentAt: Nullable(DateTime('When Twilio accepted it')),
    deliveredAt: Nullable(DateTime()),
  },
  { additionalProperties: false },
);

export const SendMessageBody = Type.Object(
  {
    customerId: Type.String({ minLength: 1, maxLength: 64 }),
    body: Type.String({ minLength: 1, maxLength: MAX_BODY, description: '1..1,600 characters' }),
  },
  { additionalProperties: false },
);
export type SendMessageInput = Static<typeof SendMessageBody>;

export const MessageListQuery = Type.Object(
  {
    ...PageQuery,
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    direction: Type.Optional(Type.Enum(['outbound', 'inbound'])),
    status: Type.Optional(EnumList(MESSAGE_STATUSES, 'Comma list of statuses')),
    kind: Type.Optional(EnumList(MESSAGE_KINDS, 'Comma list of kinds')),
  },
  { additionalProperties: false },
);
export type MessageListInput = Static<typeof MessageListQuery>;

export const ConversationQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const MessageResponse = Envelope(Message);
export const MessageList = Envelope(Type.Array(Message));

/** What Twilio posts (form-encoded); every field Twilio may add is accepted, the few used are named. */
export const TwilioForm = Type.Record(Type.String(), Type.String());
