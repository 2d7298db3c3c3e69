import { Type } from 'typebox';
import { DateTime, Envelope, Nullable, PageQuery } from '../../platform/schemas.js';

const KeyRole = Type.Union([Type.Literal('admin'), Type.Literal('member')], {
  description: 'Role the key acts with; default admin (webhooks and API keys need admin)',
});

export const ApiKey = Type.Object(
  {
    id: Type.String({ description: 'key_…' }),
    name: Type.String(),
    role: KeyRole,
    prefix: Type.String({ description: 'First characters of the key, to tell keys apart' }),
    createdAt: DateTime(),
    lastUsedAt: Nullable(DateTime()),
  },
  { additionalProperties: false },
);

export const CreatedApiKey = Type.Object(
  { ...ApiKey.properties, key: Type.String({ description: 'The secret key (sk_…), shown only in this response' }) },
  { additionalProperties: false },
);

export const CreateApiKeyBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), role: Type.Optional(KeyRole) },
  { additionalProperties: false },
);

export const ApiKeyList = Envelope(Type.Array(ApiKey));
export const CreatedApiKeyResponse = Envelope(CreatedApiKey);
export const ApiKeyListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
