import { Type } from 'typebox';
import { StringEnum } from '../../platform/enum.js';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';

export const ConnectionStatus = Type.Object(
  {
    status: StringEnum(
      ['disconnected', 'connected', 'error'] as const,
      'disconnected | connected | error (QuickBooks refused the refresh token: connect again)',
    ),
    realmId: Nullable(Type.String({ description: 'The QuickBooks company (realm) connected' })),
    connectedAt: Nullable(DateTime()),
    lastSyncAt: Nullable(DateTime('When a record last reached QuickBooks')),
    lastError: Nullable(Type.String({ description: 'Why the connection is in error' })),
    pending: Type.Integer({ description: 'Records waiting to sync' }),
    failing: Type.Integer({ description: 'Records that did not sync (see records?status=failed)' }),
  },
  { additionalProperties: false },
);
export const ConnectionResponse = Envelope(ConnectionStatus);

export const ConnectResponse = Envelope(
  Type.Object(
    {
      authorizeUrl: Type.String({
        description:
          'Intuit’s page to send the owner to; its state is good for 10 minutes, for this organization and person',
      }),
    },
    { additionalProperties: false },
  ),
);

export const CallbackQuery = Type.Object(
  {
    code: Type.Optional(
      Type.String({ minLength: 1, maxLength: 2000, description: 'The authorization code (from Intuit)' }),
    ),
    state: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'The state connect handed out' })),
    realmId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'The company authorized (from Intuit)' }),
    ),
    error: Type.Optional(Type.String({ maxLength: 200, description: 'Set by Intuit when the owner declined' })),
  },
  { additionalProperties: true },
);

export const SyncRecord = Type.Object(
  {
    id: Type.String({ description: 'qbj_…' }),
    entity: StringEnum(['customer', 'invoice', 'payment', 'refund'] as const),
    entityId: Type.String({ description: 'Our record (cus_…, inv_…, pay_…, rfd_…)' }),
    eventType: Type.String({ description: 'The change that made this sync (customer.updated, invoice.sent, …)' }),
    status: StringEnum(['pending', 'done', 'failed'] as const),
    attempts: Type.Integer(),
    error: Nullable(Type.String({ description: 'QuickBooks’ own error text (its Fault), or why it is waiting' })),
    errorCode: Nullable(Type.String({ description: 'QuickBooks’ error code (6140 duplicate DocNumber, …)' })),
    quickbooksId: Nullable(Type.String({ description: 'The record’s Id in QuickBooks once written' })),
    syncedAt: Nullable(DateTime()),
    createdAt: DateTime(),
    updatedAt: DateTime(),
  },
  { additionalProperties: false },
);
export const SyncRecordResponse = Envelope(SyncRecord);
export const SyncRecordList = Envelope(Type.Array(SyncRecord));

export const RecordListQuery = Type.Object(
  {
    status: Type.Optional(
      StringEnum(['pending', 'done', 'failed'] as const, 'pending | done | failed (all when absent)'),
    ),
    ...PageQuery,
  },
  { additionalProperties: false },
);

export const RecordParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'qbj_…' }) });
